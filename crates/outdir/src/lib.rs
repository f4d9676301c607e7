//! The output folder of `run`, `compare` and `report`, written all or nothing, and the errors
//! of writing it ([`io_error`], [`parquet_error`]: a full disk gets its own hint).
//!
//! A command writes its files into a fresh hidden
//! staging folder inside the output folder (`.evalscore-PID-RANDOM.tmp/`), and commits by
//! renames: the previous set moves into the staging folder (its completion marker, `run.json`
//! for a run, first), the new set moves out (its marker last), then the staging folder and the
//! previous set in it are removed. A rename that fails midway is rolled back, so a commit
//! either installs the whole new set or leaves the previous complete set.
//!
//! What a reader of the folder may see: while a marker is present, every file beside it
//! belongs to the same run. During a commit the marker is absent; a process killed during
//! its commit (SIGKILL, power loss) leaves a folder without a marker, holding a prefix of the
//! new set in rename order, and the previous set in its hidden staging folder, which the next
//! command into the folder removes.
//!
//! The folder may be writable by others. So the staging folder's name is unpredictable and
//! created with `mkdir` (which fails on anything already there, a symlink included), its
//! files with `O_CREAT|O_EXCL`; final names are only ever replaced by `rename`, which moves a
//! symlink rather than following it; anything at a final name, a dangling symlink included,
//! counts as present and is refused without `--overwrite`, at the start and again at commit.
//! One command at a time writes a folder: `.evalscore.lock`, locked (`flock`) for the whole
//! command, names its holder's PID.

use evalscore_error::{Error, ErrorKind};
use evalscore_storage::Location;
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The lock file of an output folder.
pub const LOCK_FILE: &str = ".evalscore.lock";

/// The output folder of a command and its staging folder.
pub struct OutDir {
    dir: PathBuf,
    names: Vec<String>,
    /// The hidden staging folder; removed on drop.
    staging: PathBuf,
    temps: Vec<(PathBuf, PathBuf)>,
    /// The staged files, created (exclusively) up front; taken when written.
    files: Mutex<Vec<Option<File>>>,
    overwrite: bool,
    lock: Option<(File, PathBuf)>,
    /// Set when a failed commit could not be rolled back: the staging folder holds the only
    /// copy of some previous outputs, so it is left in place.
    keep_staging: bool,
}

impl std::fmt::Debug for OutDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutDir")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// ENOSPC (no space left on device) and EFBIG (file too large: a quota or `ulimit -f`).
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(28 | 27))
        || matches!(
            e.kind(),
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::FileTooLarge
        )
}

pub fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    let full = is_disk_full(&e);
    output_error(
        format!("cannot {what} `{}`", path.display()),
        e,
        full,
        "check that the `--out` folder is writable",
    )
}

/// An output error with `source`: the disk-full hint when `full`, else `otherwise`.
fn output_error(
    message: String,
    source: impl Into<evalscore_error::BoxError>,
    full: bool,
    otherwise: &str,
) -> Error {
    let err = Error::new(message)
        .kind(ErrorKind::Output)
        .with_source(source);
    err.with_hint(if full {
        "the disk is full (or a file size limit was reached); free space or choose another `--out` folder. No output was written"
    } else {
        otherwise
    })
}

/// A parquet writer's failure: a full disk is told by the I/O error in its source chain.
pub fn parquet_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    let full = io_source(&e).is_some_and(is_disk_full);
    output_error(
        format!("cannot write `{}`", path.display()),
        e,
        full,
        "check that the `--out` folder is writable and has free space",
    )
}

/// The I/O error behind a parquet error, if any: the error itself, or one of its sources.
fn io_source(e: &parquet::errors::ParquetError) -> Option<&std::io::Error> {
    if let parquet::errors::ParquetError::External(b) = e {
        if let Some(io) = b.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
    }
    let mut next = std::error::Error::source(e);
    while let Some(s) = next {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        next = s.source();
    }
    None
}

/// An error naming the outputs `present` in the output `place` (a local folder or an object
/// storage prefix: `kind`), unless there are none.
pub fn refuse_outputs(place: &str, verb: &str, present: &[&str], kind: &str) -> Result<(), Error> {
    if present.is_empty() {
        return Ok(());
    }
    Err(Error::new(format!(
        "the output folder `{place}` {verb} {}",
        present.join(", ")
    ))
    .kind(ErrorKind::Output)
    .with_hint(format!(
        "pass `--overwrite` to replace them, or choose another `--out` {kind}"
    )))
}

/// `path` as messages show it: a URL (`s3://...`, `https://...`) without the credentials it
/// may hold (its password, query, a web URL's user name), any other path as it is.
pub fn shown_path(path: &Path) -> PathBuf {
    match Location::from_path(path) {
        Location::Remote(url) => PathBuf::from(url.shown()),
        Location::Local(p) => p,
    }
}

/// Only `run` uploads its outputs (output/remote.rs); elsewhere an `s3://` path would become
/// a local folder named `s3:`.
pub fn refuse_url(path: &Path) -> Result<(), Error> {
    if let Location::Remote(url) = Location::from_path(path) {
        // `url` shows itself without credentials.
        return Err(Error::new(format!(
            "`{url}` is an object storage URL; this command writes to local files only"
        ))
        .kind(ErrorKind::Output)
        .with_hint("write to a local path, or use `evalscore run`, whose `--out` may be an s3://, gs://, az:// or abfss:// prefix"));
    }
    Ok(())
}

impl OutDir {
    /// Creates `dir` if needed, takes its lock, and refuses to replace any of `names`
    /// already there unless `overwrite`. The last name is the completion marker: it is put
    /// in place last.
    pub fn prepare(dir: &Path, names: &[&str], overwrite: bool) -> Result<OutDir, Error> {
        refuse_url(dir)?;
        std::fs::create_dir_all(dir).map_err(|e| io_error("create the output folder", dir, e))?;
        let lock = lock_folder(dir)?;
        let mut outputs = OutDir {
            dir: dir.to_path_buf(),
            names: names.iter().map(|n| n.to_string()).collect(),
            staging: PathBuf::new(),
            temps: Vec::new(),
            files: Mutex::new(Vec::new()),
            overwrite,
            lock: Some(lock),
            keep_staging: false,
        };
        outputs.refuse_present("already holds")?;
        remove_stale(dir);
        outputs.staging = make_staging(dir)?;
        let mut files = Vec::with_capacity(names.len());
        for f in names {
            let tmp = outputs.staging.join(f);
            // Fails now, not after the scoring, when the folder is not writable.
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(|e| io_error("write to the output folder", dir, e))?;
            outputs.temps.push((tmp, dir.join(f)));
            files.push(Some(file));
        }
        outputs.files = Mutex::new(files);
        Ok(outputs)
    }

    /// Without `--overwrite`, anything at a final name (a file, a directory, a symlink,
    /// dangling or not) is an error.
    fn refuse_present(&self, verb: &str) -> Result<(), Error> {
        if self.overwrite {
            return Ok(());
        }
        let present: Vec<&str> = self
            .names
            .iter()
            .map(String::as_str)
            .filter(|f| std::fs::symlink_metadata(self.dir.join(f)).is_ok())
            .collect();
        refuse_outputs(&self.dir.display().to_string(), verb, &present, "folder")
    }

    /// The hidden temporary path of file `i`.
    pub fn temp(&self, i: usize) -> &Path {
        &self.temps[i].0
    }

    /// The name errors give: the file the user will look for, not its hidden temporary name.
    pub fn shown(&self, i: usize) -> &Path {
        &self.temps[i].1
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The temporary file of file `i`, to write once.
    pub fn create(&self, i: usize) -> Result<File, Error> {
        let taken = self
            .files
            .lock()
            .ok()
            .and_then(|mut f| f.get_mut(i).and_then(Option::take));
        taken.ok_or_else(|| {
            Error::new(format!(
                "internal error: `{}` written twice",
                self.shown(i).display()
            ))
            .kind(ErrorKind::Internal)
        })
    }

    /// Writes file `i` whole (JSON, HTML) and syncs it.
    pub fn write_bytes(&self, i: usize, bytes: &[u8]) -> Result<(), Error> {
        let path = self.shown(i);
        let mut f = self.create(i)?;
        f.write_all(bytes).map_err(|e| io_error("write", path, e))?;
        f.sync_all().map_err(|e| io_error("write", path, e))
    }

    /// What [`OutDir::commit`] checks before it renames anything: without `--overwrite`, no
    /// output appeared since the start; no final name is a directory. A caller committing
    /// several folders as one (a suite) checks them all first.
    pub fn check_commit(&self) -> Result<(), Error> {
        self.refuse_present("now holds (written since this run started)")?;
        for (_, dest) in &self.temps {
            if std::fs::symlink_metadata(dest).is_ok_and(|m| m.is_dir()) {
                return Err(Error::new(format!(
                    "cannot replace `{}`: it is a directory",
                    dest.display()
                ))
                .kind(ErrorKind::Output)
                .with_hint("remove it, or choose another `--out` folder"));
            }
        }
        Ok(())
    }

    /// Switches the folder to the new set: the previous set (marker first) moves into the
    /// staging folder, the new set (marker last) moves out; a failed rename rolls every step
    /// back. Without `--overwrite`, outputs that appeared since the start are refused here too.
    pub fn commit(mut self) -> Result<(), Error> {
        self.check_commit()?;
        let mut moved_old: Vec<(PathBuf, &Path)> = Vec::new();
        let mut installed: Vec<(&Path, &Path)> = Vec::new();
        let result = (|| -> Result<(), Error> {
            for (_, dest) in self.temps.iter().rev() {
                if std::fs::symlink_metadata(dest).is_ok() {
                    let name = dest.file_name().unwrap_or_default().to_string_lossy();
                    let aside = self.staging.join(format!(".old.{name}"));
                    std::fs::rename(dest, &aside).map_err(|e| io_error("replace", dest, e))?;
                    moved_old.push((aside, dest));
                }
            }
            for (tmp, dest) in &self.temps {
                std::fs::rename(tmp, dest).map_err(|e| io_error("rename into place", dest, e))?;
                installed.push((tmp, dest));
            }
            Ok(())
        })();
        let mut lost = false;
        if result.is_err() {
            for (tmp, dest) in installed.iter().rev() {
                lost |= std::fs::rename(dest, tmp).is_err();
            }
            for (aside, dest) in moved_old.iter().rev() {
                lost |= std::fs::rename(aside, dest).is_err();
            }
        }
        // If even the roll-back failed, the previous set is kept, renamed out of the way of
        // the clean-up of dead processes' staging folders, and named in the error.
        let result = if lost {
            self.keep_staging = true;
            let kept = self.staging.with_extension("kept");
            let kept = if std::fs::rename(&self.staging, &kept).is_ok() {
                kept
            } else {
                self.staging.clone()
            };
            result.map_err(|e: Error| {
                e.with_hint(format!(
                    "the previous outputs could not all be put back; they are in `{}`",
                    kept.display()
                ))
            })
        } else {
            result
        };
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        result
    }
}

/// Creates the command's staging folder, `.evalscore-PID-RANDOM.tmp`, readable only by its
/// owner until its files are renamed out.
fn make_staging(dir: &Path) -> Result<PathBuf, Error> {
    let pid = std::process::id();
    // A few tries, in case a name is taken: unpredictable names make that an attack or a
    // miracle, and either way the folder is not ours to use.
    for _ in 0..8 {
        let staging = dir.join(format!(".evalscore-{pid}-{:016x}.tmp", random()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&staging) {
            Ok(()) => return Ok(staging),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_error("write to the output folder", dir, e)),
        }
    }
    Err(Error::new(format!(
        "cannot create a staging folder in `{}`: every name tried was taken",
        dir.display()
    ))
    .kind(ErrorKind::Output))
}

/// 64 random bits from the standard library's per-process random hasher keys (seeded from
/// the operating system), for names nobody can guess.
fn random() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// Takes the folder's lock (`.evalscore.lock`, `flock`-ed), or fails at once naming the
/// holder's PID. The lock file is re-checked after locking, so a file that its last holder
/// removed meanwhile is not mistaken for the lock.
fn lock_folder(dir: &Path) -> Result<(File, PathBuf), Error> {
    let path = dir.join(LOCK_FILE);
    for _ in 0..8 {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_error("create the lock file", &path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    "another evalscore process".to_owned()
                } else {
                    format!("evalscore process {holder}")
                };
                return Err(Error::new(format!(
                    "the output folder `{}` is in use by {who}",
                    dir.display()
                ))
                .kind(ErrorKind::Output)
                .with_hint("wait for it to finish, or choose another `--out` folder"));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io_error("lock", &path, e));
            }
        }
        if !same_file(&file, &path) {
            continue;
        }
        // The PID is written before the file is cut to its length, so a full disk fails on
        // the write; a lock file that cannot name its holder is removed (still locked, as on
        // drop) rather than left empty in the folder.
        let pid = std::process::id().to_string();
        let written = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(pid.as_bytes()))
            .and_then(|()| file.set_len(pid.len() as u64));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            return Err(io_error("write the lock file", &path, e));
        }
        return Ok((file, path));
    }
    Err(Error::new(format!(
        "cannot lock the output folder `{}`: its lock file keeps changing",
        dir.display()
    ))
    .kind(ErrorKind::Output))
}

/// Whether the open `file` is still the one at `path`.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// Removes what a killed command (SIGKILL, power loss) left in `dir`: staging folders
/// `.evalscore-PID-RANDOM.tmp` and temporary files `.NAME.evalscore-PID[-RANDOM].tmp` of
/// earlier versions, whose process no longer exists. Only done where `/proc` shows which
/// processes are alive (Linux); elsewhere they stay, hidden and harmless.
fn remove_stale(dir: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(stale_pid) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            // Neither removal follows a symlink: `remove_dir_all` removes a link, not its
            // target, and `file_type` here is the entry's own.
            match entry.file_type() {
                Ok(t) if t.is_dir() => {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
                Ok(_) => {
                    let _ = std::fs::remove_file(entry.path());
                }
                Err(_) => {}
            }
        }
    }
}

/// The PID in a hidden name this module makes: `.evalscore-PID-RANDOM.tmp` or
/// `.NAME.evalscore-PID[-RANDOM].tmp`.
fn stale_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, after) = rest.rsplit_once("evalscore-")?;
    after.split('-').next()?.parse().ok()
}

impl Drop for OutDir {
    fn drop(&mut self) {
        // After a commit it holds the previous set; otherwise this command's unfinished files.
        if !self.staging.as_os_str().is_empty() && !self.keep_staging {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
        // The lock file goes while still locked: a later command creates a new one.
        if let Some((file, path)) = self.lock.take() {
            let _ = std::fs::remove_file(&path);
            drop(file);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Without `--overwrite`, an output that appeared while the command ran is refused at
    /// commit, and nothing of this command is left.
    #[test]
    fn outputs_written_meanwhile_are_refused_at_commit() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::prepare(dir.path(), &["a.txt", "done.json"], false).unwrap();
        out.write_bytes(0, b"new").unwrap();
        out.write_bytes(1, b"{}").unwrap();
        std::fs::write(dir.path().join("a.txt"), "theirs").unwrap();
        let err = out.commit().unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "the output folder `{}` now holds (written since this run started) a.txt",
                dir.path().display()
            )
        );
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["a.txt"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "theirs"
        );
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A complete earlier set of three files.
    const OLD: [(&str, &str); 3] = [
        ("a.txt", "old a"),
        ("b.txt", "old b"),
        ("done.json", "old done"),
    ];

    /// Asserts that `dir` holds exactly `files` (name, text).
    fn assert_files(dir: &Path, files: &[(&str, &str)]) {
        let names: Vec<&str> = files.iter().map(|(f, _)| *f).collect();
        assert_eq!(entries(dir), names);
        for (f, text) in files {
            assert_eq!(&std::fs::read_to_string(dir.join(f)).unwrap(), text, "{f}");
        }
    }

    /// Staging folders are unpredictable and distinct; each file is written once.
    #[test]
    fn staging_names_are_random_and_files_created_exclusively() {
        let dir = tempfile::tempdir().unwrap();
        let a = OutDir::prepare(dir.path(), &["x"], true).unwrap();
        let name_a = a.temp(0).to_path_buf();
        drop(a);
        assert_eq!(entries(dir.path()), Vec::<String>::new());
        let b = OutDir::prepare(dir.path(), &["x"], true).unwrap();
        assert_ne!(b.temp(0), name_a);
        assert_eq!(b.temp(0).file_name().unwrap(), "x");
        let staging = b
            .temp(0)
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let pid = std::process::id();
        let random = staging
            .strip_prefix(&format!(".evalscore-{pid}-"))
            .and_then(|r| r.strip_suffix(".tmp"))
            .unwrap();
        assert_eq!(random.len(), 16);
        assert!(random.bytes().all(|b| b.is_ascii_hexdigit()));
        b.create(0).unwrap();
        assert_eq!(
            b.create(0).unwrap_err().message,
            format!(
                "internal error: `{}` written twice",
                dir.path().join("x").display()
            )
        );
    }

    /// With `--overwrite` the new set replaces the old whole, and nothing hidden stays.
    #[test]
    fn a_commit_replaces_the_previous_set_and_leaves_nothing_hidden() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old a").unwrap();
        std::fs::write(dir.path().join("done.json"), "old done").unwrap();
        let out = OutDir::prepare(dir.path(), &["a.txt", "b.txt", "done.json"], true).unwrap();
        for (i, text) in ["new a", "new b", "new done"].iter().enumerate() {
            out.write_bytes(i, text.as_bytes()).unwrap();
        }
        out.commit().unwrap();
        assert_files(
            dir.path(),
            &[
                ("a.txt", "new a"),
                ("b.txt", "new b"),
                ("done.json", "new done"),
            ],
        );
    }

    /// A rename that fails midway (here: the second staged file is gone) rolls back: the
    /// previous complete set is back in place, marker included, and nothing else is left.
    #[test]
    fn a_failed_commit_leaves_the_previous_complete_set() {
        let dir = tempfile::tempdir().unwrap();
        for (f, text) in OLD {
            std::fs::write(dir.path().join(f), text).unwrap();
        }
        let out = OutDir::prepare(dir.path(), &["a.txt", "b.txt", "done.json"], true).unwrap();
        out.write_bytes(0, b"new a").unwrap();
        out.write_bytes(2, b"new done").unwrap();
        std::fs::remove_file(out.temp(1)).unwrap();
        let err = out.commit().unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "cannot rename into place `{}`",
                dir.path().join("b.txt").display()
            )
        );
        assert_files(dir.path(), &OLD);
    }

    /// A directory at a final name is never replaced, even with `--overwrite`.
    #[test]
    fn a_directory_at_a_final_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a.txt")).unwrap();
        std::fs::write(dir.path().join("a.txt/keep"), "mine").unwrap();
        let out = OutDir::prepare(dir.path(), &["a.txt", "done.json"], true).unwrap();
        out.write_bytes(0, b"new").unwrap();
        out.write_bytes(1, b"{}").unwrap();
        let err = out.commit().unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "cannot replace `{}`: it is a directory",
                dir.path().join("a.txt").display()
            )
        );
        assert_eq!(entries(dir.path()), ["a.txt"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt/keep")).unwrap(),
            "mine"
        );
    }

    /// What dead processes left (staging folders, older temporary files) goes; what a live
    /// process holds, and other hidden files, stay.
    #[test]
    fn leftovers_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // PIDs above the kernel's maximum (4194304) are never alive.
        let dead = dir.path().join(".evalscore-4999999-0123456789abcdef.tmp");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("run.json"), "{}").unwrap();
        std::fs::write(dir.path().join(".run.json.evalscore-4999998.tmp"), "").unwrap();
        let live = format!(".evalscore-{}-0123456789abcdef.tmp", std::process::id());
        std::fs::create_dir(dir.path().join(&live)).unwrap();
        std::fs::write(dir.path().join(".keep.tmp"), "").unwrap();
        let out = OutDir::prepare(dir.path(), &["run.json"], false).unwrap();
        let mut left = entries(dir.path());
        left.retain(|n| !out.temp(0).starts_with(dir.path().join(n)) && n != LOCK_FILE);
        assert_eq!(left, [live, ".keep.tmp".to_owned()]);
    }
}
