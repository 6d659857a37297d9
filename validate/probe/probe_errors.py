"""The end of every compare script: the mean and worst of its errors, and the ctest bound on the mean."""


def check_mean(script, errors, max_error, what, unit, over, digits=1):
    """Prints 'mean |WHAT| M UNIT over N OVER, worst W' of `errors` (absolute values) and exits 1, naming `script`,
    when `max_error` is given and the mean exceeds it. `unit` follows the number as written ('%', ' points', ' MB')."""
    mean = sum(errors) / len(errors)
    print(f"mean |{what}| {mean:.{digits}f}{unit} over {len(errors)} {over}, worst {max(errors):.1f}{unit}")
    if max_error is not None and mean > max_error:
        print(f"{script}: mean error {mean:.{digits}f}{unit} exceeds --max-error {max_error}")
        raise SystemExit(1)
    return mean
