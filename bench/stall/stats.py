"""Figures the stall benchmarks share: percentiles, and bootstrap intervals
over paired rounds."""


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * q / 100))] if v else None


def bootstrap(xs, stat, rng, n=4000):
    """95% interval of stat over xs, resampled n times."""
    est = sorted(stat([rng.choice(xs) for _ in xs]) for _ in range(n))
    return est[int(0.025 * n)], est[int(0.975 * n) - 1]
