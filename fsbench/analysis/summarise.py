"""From tidy rows to one value per case and metric, then mean / stddev / CV over repetitions."""

from __future__ import annotations

import math

import pandas as pd

from fsbench.analysis.difference import paired, pairs, prior_of
from fsbench.analysis.priors import with_priors
from fsbench.analysis.ratios import log_ratios
from fsbench.core import stats

#: how rows of one case combine when a tool reports several jobs or hosts
ADDITIVE = {"bandwidth", "iops", "rate", "io_bytes", "ops"}
MAXIMAL = {"runtime", "time", "clat_max", "latency_max", "memory_peak"}
MINIMAL = {"clat_min", "latency_min", "functional"}  # functional: an outcome, the worst one counts

KEYS = ["target", "workload", "tool", "job", "operation", "metric", "unit"]
#: a tool's own verdict of a value (juicefs bench's colours), worst first
VERDICT_ORDER = ("poor", "fair", "good")


def _combine(metric: str) -> str:
    if metric in ADDITIVE:
        return "sum"
    if metric in MAXIMAL:
        return "max"
    if metric in MINIMAL:
        return "min"
    return "mean"


def case_values(results: pd.DataFrame) -> pd.DataFrame:
    """One value per case, operation and metric.

    Where a tool gave an aggregate over hosts (host `all`) only that is used; otherwise jobs
    and hosts are added up for throughputs and averaged for latencies. Tool-side summaries
    (stat mean/max/min/stddev of mdtest and vdbench) keep their `stat` and are not combined.
    """
    if results.empty:
        return pd.DataFrame(columns=["case_id", "repetition", "stat", "value", *KEYS])
    df = results.copy()
    df["host"] = df["host"].astype("string").fillna("").astype(str)
    # jobs with the same name add up; for monitors the job is the watched process (or the host)
    df["job"] = df["job"].astype("string").fillna("").astype(str) if "job" in df else ""
    df["stat"] = df["stat"].fillna("value")
    is_all = df["host"] == "all"
    if is_all.any():  # keep only the aggregate where one exists for that case, operation and metric
        key = ["case_id", "operation", "metric"]
        agg = df.loc[is_all, key].drop_duplicates().assign(_has_all=True)
        df = df.merge(agg, on=key, how="left")
        df = df[df["_has_all"].isna() | (df["host"] == "all")].drop(columns="_has_all")
    params = [c for c in df.columns if c.startswith("param_")]
    group = ["case_id", "repetition", *KEYS, "stat", *params]
    for c in params:
        df[c] = df[c].astype("string").fillna("")
    # each metric has its own way of combining (sum, max, min, mean): a groupby per metric costs a few
    # milliseconds however few its rows, a tenth of a small run's report with its 40-odd metrics; there one
    # groupby per way does it, then the rows are put back in per-metric order (metrics as they first appear,
    # each metric's groups as they first appear, which a groupby that keeps first appearances gives already)
    metric_rank = {m: i for i, m in enumerate(df["metric"].drop_duplicates())}
    ways = {m: _combine(str(m)) for m in metric_rank}
    per_way = len(df) < 1000 * len(metric_rank)  # many rows per metric: reordering them costs more than it saves
    parts = []
    for how, sub in df.groupby(df["metric"].map(ways) if per_way else df["metric"], sort=False):
        way = str(how) if per_way else ways[how]
        parts.append(sub.groupby(group, sort=False, dropna=False)["value"].agg(way).reset_index())
    out = pd.concat(parts, ignore_index=True)
    if per_way and len(parts) > 1:
        order = out["metric"].map(metric_rank).to_numpy().argsort(kind="stable")
        out = out.take(order).reset_index(drop=True)
    return out


def empty_summary(params: list[str] | None = None) -> pd.DataFrame:
    """A summary without rows (a run whose every case failed), with the columns views select on."""
    return pd.DataFrame(columns=[*KEYS, "stat", *(params or []), "mean", "std", "cv", "n", *SPREAD_COLUMNS])


def summarise(results: pd.DataFrame, exclude_warmup: bool = False) -> pd.DataFrame:
    """Mean, standard deviation, coefficient of variation and count over repetitions, with the 95 % t
    interval's relative half-width (`ci`), whether the first repetition looks like a warm-up (`warmup`,
    left out of the figures when exclude_warmup: `warmup_excluded`), and the logarithms' mean and
    variance the ratio intervals are computed from (`log_mean`, `log_var`)."""
    per_case = case_values(results)
    params = [c for c in per_case.columns if c.startswith("param_")]
    group = [*KEYS, "stat", *params]
    if per_case.empty:
        return empty_summary(params)
    ordered = per_case.sort_values("repetition", kind="stable").reset_index(drop=True)
    # each measurement's (repetition, value) pairs gathered by its group number, in one pass (a pandas
    # agg(list) calls Python per group: a third of summarising 10,000 cases)
    codes = ordered.groupby(group, sort=False, dropna=False).ngroup().to_numpy()
    pairs: list[list] = [[] for _ in range(int(codes.max()) + 1 if len(codes) else 0)]
    for code, rep, value in zip(codes.tolist(), ordered["repetition"].astype(int).tolist(),
                                ordered["value"].astype(float).tolist()):
        pairs[code].append((rep, value))
    first = ~pd.Series(codes).duplicated().to_numpy()  # the groups in the order they first come, as groupby
    lists = ordered.loc[first, group].reset_index(drop=True)
    figures = pd.DataFrame([_figures(v, exclude_warmup) for v in pairs], index=lists.index)
    out = pd.concat([lists, figures], axis=1)
    out = out[[*group, "mean", "std", "n", *SPREAD_COLUMNS]]
    out.insert(len(group) + 2, "cv", (out["std"] / out["mean"].where(out["mean"] != 0)).fillna(0.0))
    return _with_results(_with_tool_verdicts(out, results, group), results, group)


#: `reps`: ((repetition, value), ...) of the values summarised, for comparisons paired by round
SPREAD_COLUMNS = ["ci", "warmup", "warmup_excluded", "log_mean", "log_var", "reps"]


def _figures(pairs: list, exclude_warmup: bool) -> dict:
    """The summary figures of one measurement's (repetition, value) pairs in repetition order."""
    pairs = [(r, float(v)) for r, v in pairs if v == v]
    vals = [v for _, v in pairs]
    warm = stats.is_warmup(vals)
    if warm and exclude_warmup:
        vals, pairs = vals[1:], pairs[1:]
    m, sd = stats.mean_std(vals)
    ci = _relative_ci(m, sd, len(vals))
    logs = stats.LogSummary.of(vals)
    return {"mean": m, "std": sd if sd == sd else 0.0, "n": len(vals), "ci": ci, "warmup": warm,
            "warmup_excluded": warm and exclude_warmup, "log_mean": logs.mean if logs else math.nan,
            "log_var": logs.var if logs else math.nan, "reps": tuple(pairs)}


def _relative_ci(m: float, sd: float, n: int) -> float:
    """stats.mean_ci(values).relative from the mean and sd already at hand (mean_ci would sum them again)."""
    if n < 2:
        return math.nan
    half = stats.t_quantile(1 - (1 - stats.LEVEL) / 2, n - 1) * sd / math.sqrt(n)
    return abs(half / m) if m else math.nan


def _worst(verdicts: pd.Series) -> str:
    have = set(verdicts.dropna().astype(str))
    return next((v for v in VERDICT_ORDER if v in have), "")


def _with_tool_verdicts(out: pd.DataFrame, results: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """`tool_verdict`: the worst verdict the tool itself gave a value over the repetitions (a run judged
    poor once is not good on average), where its rows carry one."""
    return _with_text(out, results, group, "verdict", "tool_verdict", _worst)


def _with_results(out: pd.DataFrame, results: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """`result`: what the tool printed for an outcome (objbench: why a check failed), its distinct texts
    over the repetitions, where its rows carry one."""
    return _with_text(out, results, group, "result", "result", lambda s: " / ".join(dict.fromkeys(s.astype(str))))


def _with_text(out: pd.DataFrame, results: pd.DataFrame, group: list[str], column: str, name: str,
               combine) -> pd.DataFrame:
    """out with `name`: a text column of the results, combined over the rows of each summary row."""
    if column not in results.columns or not results[column].astype("string").fillna("").ne("").any():
        return out
    df = results[results[column].astype("string").fillna("").ne("")].copy()
    df["job"] = df["job"].astype("string").fillna("").astype(str) if "job" in df else ""
    df["stat"] = df["stat"].fillna("value") if "stat" in df else "value"
    for c in group:
        if c.startswith("param_"):
            df[c] = df[c].astype("string").fillna("") if c in df else ""
    keys = [c for c in group if c in df.columns]
    texts = df.groupby(keys, sort=False, dropna=False)[column].agg(combine).reset_index()
    texts = texts.rename(columns={column: name})
    for c in keys:
        if c.startswith("param_"):
            out[c] = out[c].astype("string").fillna("")
    return out.merge(texts, on=keys, how="left")


def with_baseline(summary: pd.DataFrame, baseline: str, paired: bool = False) -> pd.DataFrame:
    """Add `ratio`: each mean divided by the baseline target's mean for the same workload point, with the
    95 % interval of the ratio (`ratio_low`, `ratio_high`: of the geometric means, by Welch's t on the
    logarithms) and its two-sided p (`ratio_p`); NaN where a side has fewer than two values.

    `paired` (the targets ran in rounds): where a row and the baseline's share 3 rounds or more, the ratio,
    its interval and p are the paired test's (fsbench.analysis.difference.paired), the one the conclusions
    decide by, so that a cell never prints an interval other than the one its colour stands for."""
    params = [c for c in summary.columns if c.startswith("param_")]
    key = ["workload", "tool", "job", "operation", "metric", "unit", "stat", *params]
    extra = [c for c in ("n", "log_mean", "log_var") if c in summary.columns]
    base = summary[summary["target"] == baseline][key + ["mean", *extra]].rename(
        columns={"mean": "baseline_mean", **{c: f"baseline_{c}" for c in extra}})
    out = summary.merge(base, on=key, how="left")
    out["ratio"] = out["mean"] / out["baseline_mean"].where(out["baseline_mean"] != 0)
    if len(extra) == 3:  # every row's interval at once (stats.log_ratio's arithmetic, by column)
        low, high, p = log_ratios(*(pd.to_numeric(out[c], errors="coerce").to_numpy(dtype=float, na_value=math.nan)
                                    for c in ("n", "log_mean", "log_var", "baseline_n", "baseline_log_mean",
                                              "baseline_log_var")))
        out["ratio_low"], out["ratio_high"], out["ratio_p"] = low, high, p
    if paired and "reps" in out.columns and "ratio_low" in out.columns:
        out = _paired_ratios(with_priors(out), summary[summary["target"] == baseline][key + ["reps"]])
    return out.drop(columns=["baseline_mean", *(f"baseline_{c}" for c in extra)])


def _paired_ratios(out: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """out's ratio, interval and p replaced by the paired test's where it and the baseline share 3 rounds."""
    key = [c for c in base.columns if c != "reps"]
    merged = out[key].merge(base.rename(columns={"reps": "_base_reps"}), on=key, how="left")
    ratio, low, high, p = (out[c].to_numpy(dtype=float, copy=True) for c in ("ratio", "ratio_low", "ratio_high",
                                                                               "ratio_p"))
    priors = zip(out["prior_df"].tolist(), out["prior_var"].tolist())
    for i, (mine, theirs, prior) in enumerate(zip(out["reps"].tolist(), merged["_base_reps"].tolist(), priors)):
        if not (isinstance(mine, tuple) and isinstance(theirs, tuple)) or mine is theirs:
            continue
        ab = pairs({"reps": theirs}, {"reps": mine})
        if len(ab) >= 3:
            d = paired(ab, prior=prior_of({"prior": prior}))
            ratio[i], low[i], high[i], p[i] = d.ratio, d.low, d.high, d.p
    return out.assign(ratio=ratio, ratio_low=low, ratio_high=high, ratio_p=p)
