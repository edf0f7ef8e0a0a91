import pytest

from hindsight.ids import is_arxiv_id, normalize_arxiv_id


@pytest.mark.parametrize(
    "raw, base",
    [
        ("2401.01234", "2401.01234"),
        ("2401.01234v3", "2401.01234"),
        ("1412.1234", "1412.1234"),  # last month of 4-digit numbers
        ("1501.00001v1", "1501.00001"),  # first month of 5-digit numbers
        ("0704.0001", "0704.0001"),  # the first new-style id
        ("cs/0501001", "cs/0501001"),
        ("cs/0501001v2", "cs/0501001"),
        ("hep-th/9901001v1", "hep-th/9901001"),
        ("math.AG/0601001", "math/0601001"),
        ("arXiv:2401.01234", "2401.01234"),
        ("arxiv:2401.01234v2", "2401.01234"),
        ("http://arxiv.org/abs/2004.13332v1", "2004.13332"),
        ("https://arxiv.org/abs/cs/0501001v2", "cs/0501001"),
        ("https://arxiv.org/pdf/2401.01234v1.pdf", "2401.01234"),
        ("https://export.arxiv.org/abs/2401.01234", "2401.01234"),
        ("  2401.01234 \n", "2401.01234"),
    ],
)
def test_accepted_forms_normalise_to_the_base_id(raw, base):
    assert normalize_arxiv_id(raw) == base


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "2401",
        "2401.123",
        "2401.123456",
        "2413.01234",
        "2400.01234",
        "1501.1234",  # 4 digits after 2014 is not a real id
        "1412.12345",  # 5 digits before 2015 neither
        "0612.1234",  # new style began in April 2007
        "2401.01234v",
        "2401.01234vx",
        "v2401.01234",
        "2401-01234",
        "cs/05010",
        "cs/0513001",
        "https://example.org/abs/2401.01234",
        "doi:10.1000/xyz",
        "W2741809807",
        "2401.01234 2401.05678",
        None,
        2401.01234,
        42,
        ["2401.01234"],
        {"id": "2401.01234"},
    ],
)
def test_anything_else_is_malformed_and_never_raises(raw):
    assert normalize_arxiv_id(raw) is None
    assert not is_arxiv_id(raw)
