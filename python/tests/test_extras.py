"""The extras of the installed package: each installs what its path imports."""

from importlib.metadata import requires


def extra(name):
    # Build backends write the marker with either quote (maturin: `extra == 'spark'`).
    markers = (f'extra == "{name}"', f"extra == '{name}'")
    return sorted(
        r.split(";")[0].strip()
        for r in requires("evalscore")
        if any(m in r for m in markers)
    )


def test_spark_extra_installs_pandas_for_map_in_arrow():
    # mapInArrow raises PySparkImportError ("Pandas >= 2.2.0 must be installed") without it.
    assert extra("spark") == ["pandas>=2.2", "pyspark>=3.5"]


def test_ray_extra_installs_ray_data():
    # ray[data] brings pandas, NumPy and pyarrow, which map_batches uses.
    assert extra("ray") == ["ray[data]>=2.9"]
