"""How fio reads the words of a job file: option aliases, comments cut at `#` or `;`, `${NAME}` and keywords.

fio (3.33, checked by hand) cuts every line at its first `;` or `#` (so `runtime=3600  # one hour` is
3600, and `filename_format=a#b` is `a`), replaces `${NAME}` with the environment variable NAME of the
machine that reads the job file (in client/server mode, the client), and reads a section whose name
starts with `global` (6 characters compared: `[globalx]` is one) as defaults of the jobs after it.
"""

from __future__ import annotations

import re

ENV = re.compile(r"\$\{([^}]+)\}")  # fio takes any name up to the brace (`${a.b}` too)
#: fio's option aliases (`fio --cmdhelp=OPTION` prints them): alias -> the option it sets
ALIASES: dict[str, str] = {"blocksize": "bs", "blockalign": "ba", "blocksize_unaligned": "bs_unaligned",
           "blocksize_range": "bsrange", "disable_bw": "disable_bw_measurement", "fill_fs": "fill_device",
           "io_limit": "io_size", "iodepth_batch_submit": "iodepth_batch",
           "iodepth_batch_complete": "iodepth_batch_complete_min", "iomem": "mem", "nr_files": "nrfiles",
           "fileoffset": "offset", "ratecycle": "rate_cycle", "ratemin": "rate_min", "timeout": "runtime",
           "readwrite": "rw", "ss": "steadystate", "ss_dur": "steadystate_duration",
           "ss_ramp": "steadystate_ramp_time", "wait_for_previous": "stonewall"}


#: option -> every name that sets it (itself and its aliases)
SPELLINGS: dict[str, tuple[str, ...]] = {
    option: (option, *(a for a, o in ALIASES.items() if o == option)) for option in set(ALIASES.values())}
#: what fio does to a value in a job file: cut at these characters (there is no escape for them)
COMMENT_CHARS = "#;"
#: words fio replaces in every option value (case-sensitive; checked: `$ncpus` anywhere fails the job)
KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")


def canonical(key: str) -> str:
    """The option an option name sets (`timeout` -> `runtime`)."""
    return ALIASES.get(key, key)


def spellings(key: str) -> tuple[str, ...]:
    """Every name that sets the option key sets (`runtime`, `timeout`)."""
    option = canonical(key)
    return SPELLINGS.get(option, (option,))


def value_change(value: str) -> str | None:
    """What fio would do to this text as a value in a job file, or None when it reads it as written.

    fio cuts a line at its first `#` or `;` (no escape exists), fills `${NAME}` from the environment
    of the host that reads the job file, and replaces `$ncpus`, `$pagesize` and `$mb_memory`.
    """
    for c in COMMENT_CHARS:
        if c in value:
            return f"holds {c!r}: fio cuts a job-file line at its first '#' or ';' and would read " \
                   f"{strip_comment(value)!r}"
    if ENV.search(value):
        return "holds ${...}: fio would fill it from the environment of the host that reads the job file"
    for word in KEYWORDS:
        if word in value:
            return f"holds {word!r}: fio replaces it in every value (and then fails to read the value)"
    return None


def is_global(name: str) -> bool:
    """Whether fio reads a section of this name as global options (it compares the first 6 characters)."""
    return name.startswith("global")


def strip_comment(line: str) -> str:
    """What fio keeps of a line: up to its first `;` or `#`, blanks trimmed."""
    return line.partition("#")[0].partition(";")[0].strip()  # cut at one, then the other: the first wins
