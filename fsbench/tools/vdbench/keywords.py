"""Which parameter a key names, read the way vdbench reads it.

vdbench lower-cases every keyword and matches it by its first letters: `LUN`, `lu` and `lun` are
all sd's lun=, `sta` in a run definition is start_cmd=. So a check on a parameter is a check on
the keyword vdbench will take the key for. Below are the keywords each section of a parameter file
reads in vdbench 5.04, in the order its reader tries them (the first whose name starts with the key
wins); a trailing '=' marks one matched only when written whole. A key that begins several
parameters is refused here instead of left to that order, a key no parameter begins is unknown.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

#: dedup settings: vdbench reads any keyword that starts with 'dedup' as one of them
_DEDUP = "dedup= dedupratio= dedupunit= dedupsets= dedupflipflop= deduphotsets="
_TABLES = {
    "general": "compression= compratio compressionseed " + _DEDUP + " port pattern data_errors dataerrors swat "
               "validate journal= startcmd= start_cmd= endcmd= end_cmd= heartbeat_error= debug= unix2windows "
               "formatxfersize create_anchors formatsds report report_run_totals histogram psrset auxreport "
               "monitor concatenatesds messagescan abort_failed_skew misc pattern_buffer= showlba= loop=",
    "hd": "system vdbench shell user jvms clients mount",
    "sd": "host hd= lun count size threads hitarea offset align kstat instance replay journal resetlun resetbus "
          "openflags tape range " + _DEDUP + " streams",
    "wd": "sd= skew xfersize readpct rdpct writepct wrpct range hotband seekpct stride priority iorate rhpct whpct "
          "host hd= openflags user= threads streams",
    "fsd": "anchor journal host hd= width depth sizes shared wss workingsetsize total_size totalsize files "
           "distribution cleanup openflags log= count " + _DEDUP,
    "fwd": "fsd= readpct rdpct stopafter operation fileselect fileio= xfersizes skew threads target host hd= "
           "openflags",
    "rd": "wd= sd= fsd= iorate maxdata= maxdataread= maxdatawritten= curve stopcurve elapsed interval warmup "
          "replay= pause forxfersize forthreads forrdpct forrhpct forwhpct forseekpct forhitarea forcompratio "
          "forcompression fordepth forwidth forfiles forsizes fortotalsize forwss forworkingsetsize foroperations "
          "xfersize threads rdpct rhpct whpct seekpct hitarea compratio compression depth width files sizes "
          "totalsize wss workingsetsize distribution startcmd start_cmd endcmd end_cmd fwd= fwdrate operations "
          "format openflags mount",
}
#: keywords that end a section and start a definition of their own (`rd=` inside a wd is a new run)
_STARTS = {"general": "rg sd fsd wd fwd rd hd host", "hd": "rg sd fsd wd fwd rd hd host", "sd": "sd wd fwd rd",
           "wd": "wd fwd rd", "fsd": "fsd sd wd fwd rd", "fwd": "fwd wd rd", "rd": "rd"}
#: two spellings of one parameter: a key that begins both is not ambiguous
ALIASES = {"startcmd": "start_cmd", "endcmd": "end_cmd", "dataerrors": "data_errors", "rdpct": "readpct",
           "wrpct": "writepct", "workingsetsize": "wss", "total_size": "totalsize", "forworkingsetsize": "forwss"}
WHAT = {"general": "general", "hd": "host (hd)", "sd": "storage (sd)", "wd": "workload (wd)",
        "fsd": "file system (fsd)", "fwd": "file system workload (fwd)", "rd": "run (rd)"}


def _words(kind: str) -> tuple[tuple[str, ...], frozenset[str]]:
    items = _TABLES[kind].split()
    return tuple(w.rstrip("=") for w in items), frozenset(w.rstrip("=") for w in items if w.endswith("="))


KEYWORDS = {kind: _words(kind) for kind in _TABLES}


@dataclass(frozen=True)
class Keyword:
    """What vdbench takes a key for: the parameter's name, or why it cannot be read as one (`unknown`: no
    parameter of that section begins with it)."""

    name: str = ""
    problem: str = ""
    hint: str = ""
    unknown: bool = False


def resolve(kind: str, key: str) -> Keyword:
    """The parameter of a `kind` section ('general', 'hd', 'sd', ...) that vdbench reads `key` as."""
    k = key.lower()
    words, whole = KEYWORDS[kind]
    if len(k) < 2:
        return Keyword(problem=f"vdbench needs a keyword of at least 2 letters, {key!r} has {len(k)}",
                       hint="write the whole keyword")
    if k in _STARTS[kind].split():
        return Keyword(problem=f"{k}= would start a new definition in the parameter file, not set a parameter "
                               f"of this one", hint="write each definition under jobs, named with its type "
                                                    "(fsd1, fwd1, rd1...)")
    matches = [w for w in words if (w == k if w in whole else w.startswith(k))]
    names = list(dict.fromkeys(ALIASES.get(w, w) for w in matches))
    if not names:
        # a start of a keyword read only whole (general start_cmd=) is the likeliest meaning
        close = [w for w in words if w.startswith(k)][:3] or difflib.get_close_matches(k, words, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(close)}?" if close else \
            f"vdbench's {WHAT[kind]} parameters: {', '.join(sorted(set(words)))}"
        return Keyword(problem=f"vdbench has no {WHAT[kind]} parameter {key!r}", hint=hint, unknown=True)
    if len(names) > 1 and k not in words:
        return Keyword(problem=f"{key!r} is ambiguous: vdbench reads a keyword by its first letters, and "
                               f"{', '.join(names)} all begin with {k!r}",
                       hint=f"write the whole keyword, e.g. {names[0]}")
    return Keyword(name=names[0])  # a whole keyword is the first it begins (tests/unit/test_vdbench_keywords.py)
