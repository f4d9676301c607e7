//! The plain-text tables on stdout (comfy-table): the run summary, its confusion matrices and
//! `compare`'s table. A header, a rule of `-` under each column, two spaces between columns,
//! no borders and no trailing spaces.

use comfy_table::{presets, CellAlignment, Table};

/// Lays out `rows` under `header`; `right[i]` says whether column `i` is right-aligned.
pub fn render(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    table.set_header(header.to_vec());
    table.add_rows(rows.iter().cloned());
    // The rule is the header cells' second line, as wide as each column: comfy-table's own
    // header line would also run under the gaps between the columns.
    let widths = table.column_max_content_widths();
    table.set_header(
        header
            .iter()
            .zip(widths)
            .map(|(h, w)| format!("{h}\n{}", "-".repeat(usize::from(w))))
            .collect::<Vec<_>>(),
    );
    for (i, column) in table.column_iter_mut().enumerate() {
        // Two spaces after each column; trimming drops them after the last.
        column.set_padding((0, 2));
        if right.get(i).copied().unwrap_or(false) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.trim_fmt() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| (*c).to_owned()).collect()
    }

    #[test]
    fn columns_are_two_spaces_apart_under_a_rule_without_trailing_spaces() {
        let rows = [
            row(&["exact", "Accuracy", "0.780000", "300"]),
            row(&["f1_score_long", "", "1", "7"]),
        ];
        assert_eq!(
            render(
                &["scorer", "metric", "value", "n"],
                &rows,
                &[false, false, true, true]
            ),
            "scorer         metric       value    n\n\
             -------------  --------  --------  ---\n\
             exact          Accuracy  0.780000  300\n\
             f1_score_long                   1    7\n"
        );
    }

    #[test]
    fn a_last_column_left_aligned_and_no_rows() {
        assert_eq!(
            render(&["a", "verdict"], &[row(&["xyz", "tied"])], &[false, false]),
            "a    verdict\n---  -------\nxyz  tied\n"
        );
        assert_eq!(render(&["a", "bb"], &[], &[]), "a  bb\n-  --\n");
    }

    #[test]
    fn widths_are_terminal_columns() {
        // `…` takes one column, `是` two.
        assert_eq!(
            render(
                &["label", "n"],
                &[row(&["ab…", "1"]), row(&["是", "22"])],
                &[false, true]
            ),
            "label   n\n-----  --\nab…     1\n是     22\n"
        );
    }
}
