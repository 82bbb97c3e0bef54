/*
 * metabench: fsbench's own metadata benchmark for any mounted path (FUSE, NFS, local, tmpfs...).
 *
 *   metabench calls --dir DIR --output FILE [--ops LIST] [--iterations N] [--warmup N] [--cache-wait S]
 *                   [--counters NAME --counters-prefix PREFIX]
 *   metabench concurrency --dir DIR --output FILE [--ops LIST] [--threads T] [--files N] [--bytes B]
 *   metabench barrier --listen HOST:PORT --parties N
 *   metabench --version | --list
 *
 * `calls` times one system call at a time, N times per operation after a warm-up, each on objects
 * prepared for it outside the timed region (seed 000's per-call table). `concurrency` runs
 * create_write, open_read, rename and delete phases on T threads, N files each, every phase released
 * by a barrier so that all threads start together (seed 002's NNBench operations). Across hosts, every
 * host's metabench is given `--barrier HOST:PORT` of one `metabench barrier` (fsbench starts it on the
 * first host): each operation starts on all hosts when the last host is ready for it.
 *
 * `--counters NAME` (calls mode): a file at the root of the mount holding DIR whose lines `PREFIX<what> <count>`
 * count the requests the file system's client sent to its metadata engine (JuiceFS: `.stats`, prefix
 * `juicefs_meta_ops_total_`). It is read just before and just after each of 20 timed calls of an operation,
 * spread evenly over them, outside the timed region, and each operation's JSON gets the requests those calls
 * caused (`engine_requests` for `engine_calls` calls), in all and per <what>: a call that caused none was
 * served by a cache, not by the engine.
 *
 * Everything is created inside DIR/metabench.<pid>/ and removed at the end. Results go to FILE as
 * JSON (written to FILE.part, then renamed): nanoseconds measured with CLOCK_MONOTONIC around the
 * call only. Exit status: 0 every operation ran (or is unsupported by the file system: said in the
 * JSON), 1 an operation failed (said in the JSON and on stderr), 2 usage, 3 no result could be written.
 *
 * Build: cc -std=gnu11 -O2 -Wall -Wextra -pthread -o metabench metabench.c -lm (build.sh)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define VERSION "1.1.0"
#define SCHEMA 1
#define NAME_MAX_LEN 64
#define IO_BLOCK 4096
#define LIST_BUF 65536          /* getdents64: the kernel fills it, it allocates nothing of its size */
#define XATTR_LIST 1024
#define MAX_ITERATIONS 100000000L
#define MAX_THREADS 4096

/* ------------------------------------------------------------------------------------------------ */
/* small helpers                                                                                     */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("metabench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Whether an errno says the file system does not offer a call (not that the call went wrong); EPERM
 * counts only from the timed call itself (link on a file system without hard links), never from setup. */
static int unsupported(int err, int in_call)
{
    return err == ENOTSUP || err == EOPNOTSUPP || err == ENOSYS || (in_call && err == EPERM);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st; (void)ftw;
    return (type == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

/* Remove a folder this program made, with everything in it (symbolic links are not followed). */
static int remove_tree(const char *path)
{
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------------------------------------ */
/* statistics of one operation's samples                                                             */

struct stats {
    long count;
    double mean, stddev;
    uint64_t total, min, max, p50, p90, p99, p999;
};

/* Nearest-rank percentile of sorted samples: the smallest value with at least q of them at or below. */
static uint64_t rank(const uint64_t *sorted, long n, double q)
{
    long k = (long)(q * (double)n + 0.999999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}

static struct stats summarise(uint64_t *samples, long n)
{
    struct stats s = {0};
    s.count = n;
    if (n == 0)
        return s;
    qsort(samples, (size_t)n, sizeof *samples, cmp_u64);
    long double sum = 0, sq = 0;
    for (long i = 0; i < n; i++)
        sum += samples[i];
    s.total = (uint64_t)sum;
    s.mean = (double)(sum / n);
    for (long i = 0; i < n; i++) {
        long double d = (long double)samples[i] - s.mean;
        sq += d * d;
    }
    s.stddev = n > 1 ? sqrt((double)(sq / (n - 1))) : 0.0;
    s.min = samples[0];
    s.max = samples[n - 1];
    s.p50 = rank(samples, n, 0.50);
    s.p90 = rank(samples, n, 0.90);
    s.p99 = rank(samples, n, 0.99);
    s.p999 = rank(samples, n, 0.999);
    return s;
}

static void json_stats(FILE *f, const struct stats *s)
{
    fprintf(f, "\"count\": %ld, \"total_ns\": %llu, \"mean_ns\": %.3f, \"stddev_ns\": %.3f, "
            "\"min_ns\": %llu, \"max_ns\": %llu, \"p50_ns\": %llu, \"p90_ns\": %llu, \"p99_ns\": %llu, "
            "\"p999_ns\": %llu", s->count, (unsigned long long)s->total, s->mean, s->stddev,
            (unsigned long long)s->min, (unsigned long long)s->max, (unsigned long long)s->p50,
            (unsigned long long)s->p90, (unsigned long long)s->p99, (unsigned long long)s->p999);
}

/* The cost of the timer itself: the median of back-to-back clock readings. */
static uint64_t timer_overhead(void)
{
    enum { N = 2001 };
    static uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = now_ns();
        uint64_t b = now_ns();
        d[i] = b - a;
    }
    qsort(d, N, sizeof *d, cmp_u64);
    return d[N / 2];
}

/* ------------------------------------------------------------------------------------------------ */
/* mode `calls`: one system call timed at a time                                                     */

struct call_ctx {
    int dfd;                    /* the operation's own folder */
    int fd;                     /* a file of the operation (getattr, setattr, xattrs, write, read) */
    int slices;                 /* read_1, read_10: how many separate writes made the file */
    char a[NAME_MAX_LEN];       /* the object of this iteration */
    char b[NAME_MAX_LEN];       /* its second name (renames, links) */
    char value[32];
    char *buf;                  /* I/O and listing buffer */
    size_t buflen;
};

struct call_op {
    const char *name;
    const char *calls;          /* what is timed, for the JSON and the docs */
    int cold;                   /* wait --cache-wait after setup: kernel entry caches must expire */
    int (*setup)(struct call_ctx *, long n);
    int (*prep)(struct call_ctx *, long i);
    int (*call)(struct call_ctx *, long i);
    int (*post)(struct call_ctx *, long i);
};

static int make_file(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    return fd < 0 ? -1 : close(fd);
}

static void name_of(char *out, char kind, long i)
{
    snprintf(out, NAME_MAX_LEN, "%c%09ld", kind, i);
}

static int setup_dirs(struct call_ctx *c, long n)
{
    for (long i = 0; i < n; i++) {
        name_of(c->a, 'd', i);
        if (mkdirat(c->dfd, c->a, 0755))
            return -1;
    }
    return 0;
}

static int setup_files(struct call_ctx *c, long n)
{
    for (long i = 0; i < n; i++) {
        name_of(c->a, 'f', i);
        if (make_file(c->dfd, c->a))
            return -1;
    }
    return 0;
}

static int setup_one_file(struct call_ctx *c, long n)
{
    (void)n;
    c->fd = openat(c->dfd, "file", O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
    return c->fd < 0 ? -1 : 0;
}

static int setup_listing(struct call_ctx *c, long entries)
{
    if (mkdirat(c->dfd, "list", 0755))
        return -1;
    int lfd = openat(c->dfd, "list", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd < 0)
        return -1;
    for (long i = 0; i < entries; i++) {
        name_of(c->a, 'f', i);
        if (make_file(lfd, c->a)) {
            close(lfd);
            return -1;
        }
    }
    return close(lfd);
}

static int setup_readdir_10(struct call_ctx *c, long n) { (void)n; return setup_listing(c, 10); }
static int setup_readdir_1k(struct call_ctx *c, long n) { (void)n; return setup_listing(c, 1000); }

static int setup_xattrs(struct call_ctx *c, int count)
{
    if (setup_one_file(c, 0))
        return -1;
    for (int k = 0; k < count; k++) {
        char key[48];
        snprintf(key, sizeof key, "user.metabench.%d", k);
        if (fsetxattr(c->fd, key, "0123456789abcdef", 16, 0))
            return -1;
    }
    return 0;
}

static int setup_xattr_1(struct call_ctx *c, long n) { (void)n; return setup_xattrs(c, 1); }
static int setup_xattr_10(struct call_ctx *c, long n) { (void)n; return setup_xattrs(c, 10); }

static int setup_link_target(struct call_ctx *c, long n) { (void)n; return make_file(c->dfd, "target"); }

static int setup_write(struct call_ctx *c, long n)
{
    (void)n;
    memset(c->buf, 'w', IO_BLOCK);
    return setup_one_file(c, 0);
}

/* A file of `slices` blocks, each written and made durable on its own (JuiceFS: one slice each). */
static int setup_read(struct call_ctx *c)
{
    memset(c->buf, 'r', IO_BLOCK);
    if (setup_one_file(c, 0))
        return -1;
    for (int k = 0; k < c->slices; k++)
        if (pwrite(c->fd, c->buf, IO_BLOCK, (off_t)k * IO_BLOCK) != IO_BLOCK || fsync(c->fd))
            return -1;
    return 0;
}

static int setup_read_1(struct call_ctx *c, long n) { (void)n; c->slices = 1; return setup_read(c); }
static int setup_read_10(struct call_ctx *c, long n) { (void)n; c->slices = 10; return setup_read(c); }

static int prep_mvdir(struct call_ctx *c, long i) { name_of(c->a, 'd', i); name_of(c->b, 'm', i); return 0; }
static int prep_dir(struct call_ctx *c, long i) { name_of(c->a, 'd', i); return 0; }
static int prep_file(struct call_ctx *c, long i) { name_of(c->a, 'f', i); return 0; }
static int prep_rename(struct call_ctx *c, long i) { name_of(c->a, 'f', i); name_of(c->b, 'r', i); return 0; }
static int prep_link(struct call_ctx *c, long i) { name_of(c->a, 'l', i); return 0; }
static int prep_symlink(struct call_ctx *c, long i) { name_of(c->a, 's', i); return 0; }
static int prep_value(struct call_ctx *c, long i) { snprintf(c->value, sizeof c->value, "%016ld", i); return 0; }

static int prep_removexattr(struct call_ctx *c, long i)
{
    prep_value(c, i);
    return fsetxattr(c->fd, "user.metabench.rm", c->value, 16, 0);
}

/* Reads must reach the file system, not the page cache this program filled (tmpfs keeps its pages). */
static int prep_read(struct call_ctx *c, long i)
{
    (void)i;
    int err = posix_fadvise(c->fd, 0, 0, POSIX_FADV_DONTNEED);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

static int call_mkdir(struct call_ctx *c, long i) { (void)i; return mkdirat(c->dfd, c->a, 0755); }
static int call_rename(struct call_ctx *c, long i) { (void)i; return renameat(c->dfd, c->a, c->dfd, c->b); }
static int call_rmdir(struct call_ctx *c, long i) { (void)i; return unlinkat(c->dfd, c->a, AT_REMOVEDIR); }
static int call_mknod(struct call_ctx *c, long i) { (void)i; return mknodat(c->dfd, c->a, S_IFREG | 0644, 0); }
static int call_unlink(struct call_ctx *c, long i) { (void)i; return unlinkat(c->dfd, c->a, 0); }
static int call_access(struct call_ctx *c, long i) { (void)i; return faccessat(c->dfd, c->a, R_OK | W_OK, 0); }
static int call_setattr(struct call_ctx *c, long i) { return fchmod(c->fd, (i & 1) ? 0600 : 0644); }
static int call_link(struct call_ctx *c, long i) { (void)i; return linkat(c->dfd, "target", c->dfd, c->a, 0); }
static int call_symlink(struct call_ctx *c, long i) { (void)i; return symlinkat("target", c->dfd, c->a); }
static int call_setxattr(struct call_ctx *c, long i)
{
    (void)i;
    return fsetxattr(c->fd, "user.metabench.0", c->value, 16, 0);
}
static int call_removexattr(struct call_ctx *c, long i) { (void)i; return fremovexattr(c->fd, "user.metabench.rm"); }

static int call_create(struct call_ctx *c, long i)
{
    (void)i;
    int fd = openat(c->dfd, c->a, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    c->fd = fd;
    return 0;
}

static int post_create(struct call_ctx *c, long i)
{
    (void)i;
    int rc = close(c->fd);
    c->fd = -1;
    return rc;
}

static int call_lookup(struct call_ctx *c, long i)
{
    struct stat st;
    (void)i;
    return fstatat(c->dfd, c->a, &st, AT_SYMLINK_NOFOLLOW);
}

/* Fresh attributes from the file system: statx's AT_STATX_FORCE_SYNC makes FUSE and NFS ask the
 * server even when the kernel holds unexpired attributes (plain fstat would answer from them). */
static int call_getattr(struct call_ctx *c, long i)
{
    (void)i;
#ifdef STATX_BASIC_STATS
    struct statx stx;
    return statx(c->fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &stx);
#else
    struct stat st;
    return fstat(c->fd, &st);
#endif
}

/* The whole listing, as `ls` does it: open the folder, read every entry, close it. */
static int call_readdir(struct call_ctx *c, long i)
{
    (void)i;
    int fd = openat(c->dfd, "list", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long got;
    while ((got = syscall(SYS_getdents64, fd, c->buf, c->buflen)) > 0)
        ;
    int err = errno;
    close(fd);
    if (got < 0) {
        errno = err;
        return -1;
    }
    return 0;
}

/* Buffers of the size the answer needs: the kernel allocates one as large as the caller's for these
 * calls, and a 64 KiB one would add a microsecond to every call on a fast file system. */
static int call_getxattr(struct call_ctx *c, long i)
{
    (void)i;
    return fgetxattr(c->fd, "user.metabench.0", c->value, sizeof c->value) < 0 ? -1 : 0;
}

static int call_listxattr(struct call_ctx *c, long i)
{
    (void)i;
    return flistxattr(c->fd, c->buf, XATTR_LIST) < 0 ? -1 : 0;   /* 10 names of 17 bytes fit */
}

static int call_write(struct call_ctx *c, long i)
{
    ssize_t n = pwrite(c->fd, c->buf, IO_BLOCK, (off_t)i * IO_BLOCK);
    if (n != IO_BLOCK) {
        if (n >= 0)
            errno = EIO;   /* a short write sets no errno */
        return -1;
    }
    return fsync(c->fd);
}

static int call_read(struct call_ctx *c, long i)
{
    (void)i;
    ssize_t want = (ssize_t)c->slices * IO_BLOCK;
    ssize_t got = pread(c->fd, c->buf, (size_t)want, 0);
    if (got != want) {
        if (got >= 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* Seed 000's operations, in its order (its `newchunk` is JuiceFS-internal: no system call reaches it). */
static const struct call_op CALL_OPS[] = {
    {"mkdir", "mkdirat", 0, NULL, prep_dir, call_mkdir, NULL},
    {"mvdir", "renameat (a folder)", 0, setup_dirs, prep_mvdir, call_rename, NULL},
    {"rmdir", "unlinkat AT_REMOVEDIR", 0, setup_dirs, prep_dir, call_rmdir, NULL},
    {"readdir_10", "openat O_DIRECTORY + getdents64 to the end + close (10 entries)", 0, setup_readdir_10, NULL,
     call_readdir, NULL},
    {"readdir_1k", "openat O_DIRECTORY + getdents64 to the end + close (1000 entries)", 0, setup_readdir_1k, NULL,
     call_readdir, NULL},
    {"mknod", "mknodat S_IFREG", 0, NULL, prep_file, call_mknod, NULL},
    {"create", "openat O_CREAT|O_EXCL (close not timed)", 0, NULL, prep_file, call_create, post_create},
    {"rename", "renameat (a file)", 0, setup_files, prep_rename, call_rename, NULL},
    {"unlink", "unlinkat", 0, setup_files, prep_file, call_unlink, NULL},
    {"lookup", "fstatat AT_SYMLINK_NOFOLLOW (each name once)", 1, setup_files, prep_file, call_lookup, NULL},
#ifdef STATX_BASIC_STATS
    {"getattr", "statx AT_EMPTY_PATH|AT_STATX_FORCE_SYNC", 0, setup_one_file, NULL, call_getattr, NULL},
#else
    {"getattr", "fstat", 0, setup_one_file, NULL, call_getattr, NULL},
#endif
    {"setattr", "fchmod", 0, setup_one_file, NULL, call_setattr, NULL},
    {"access", "faccessat R_OK|W_OK (each name once)", 1, setup_files, prep_file, call_access, NULL},
    {"setxattr", "fsetxattr (16 bytes, create or replace)", 0, setup_one_file, prep_value, call_setxattr, NULL},
    {"getxattr", "fgetxattr", 0, setup_xattr_1, NULL, call_getxattr, NULL},
    {"removexattr", "fremovexattr (set again untimed)", 0, setup_one_file, prep_removexattr, call_removexattr,
     NULL},
    {"listxattr_1", "flistxattr (1 attribute)", 0, setup_xattr_1, NULL, call_listxattr, NULL},
    {"listxattr_10", "flistxattr (10 attributes)", 0, setup_xattr_10, NULL, call_listxattr, NULL},
    {"link", "linkat", 0, setup_link_target, prep_link, call_link, NULL},
    {"symlink", "symlinkat", 0, NULL, prep_symlink, call_symlink, NULL},
    {"write", "pwrite 4 KiB + fsync", 0, setup_write, NULL, call_write, NULL},
    {"read_1", "pread 4 KiB of a file written in 1 piece (page cache dropped untimed)", 0, setup_read_1,
     prep_read, call_read, NULL},
    {"read_10", "pread 40 KiB of a file written in 10 pieces (page cache dropped untimed)", 0, setup_read_10,
     prep_read, call_read, NULL},
};
#define N_CALL_OPS (sizeof CALL_OPS / sizeof CALL_OPS[0])

static const char *CONCURRENT_OPS[] = {"create_write", "open_read", "rename", "delete"};
#define N_CONCURRENT_OPS 4

/* ------------------------------------------------------------------------------------------------ */
/* the barrier across hosts: one byte each way per operation over TCP                                */

static int barrier_fd = -1;

/* HOST:PORT (or [IPv6]:PORT) -> addresses; the host part is cut at the last colon */
static struct addrinfo *resolve(const char *spec, int passive)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : 0;
    if (!colon || !len || len >= sizeof host || !colon[1])
        die(2, "'%s' is not HOST:PORT", spec);
    memcpy(host, spec, len);
    host[len] = 0;
    if (host[0] == '[' && host[len - 1] == ']') {
        memmove(host, host + 1, len - 2);
        host[len - 2] = 0;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = passive ? AI_PASSIVE : 0};
    struct addrinfo *found = NULL;
    int err = getaddrinfo(host, colon + 1, &hints, &found);
    if (err)
        die(3, "cannot resolve %s: %s", spec, gai_strerror(err));
    return found;
}

/* Join the barrier at HOST:PORT, retrying for 30 s while its server starts. */
static void barrier_join(const char *spec)
{
    struct addrinfo *ai = resolve(spec, 0);
    for (int attempt = 0; attempt < 300 && barrier_fd < 0; attempt++) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            barrier_fd = fd;
            break;
        }
        if (fd >= 0)
            close(fd);
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    freeaddrinfo(ai);
    if (barrier_fd < 0)
        die(3, "cannot reach the barrier across hosts at %s: %s", spec, strerror(errno));
    int one = 1;
    setsockopt(barrier_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (send(barrier_fd, "h", 1, MSG_NOSIGNAL) != 1)   /* a party, not a probe that only checks the port */
        die(3, "the barrier across hosts at %s refused this host: %s", spec, strerror(errno));
}

/* Wait until every host has reached this point (nothing to wait for on one host). */
static void barrier_wait(const char *what)
{
    char c = 'r';
    if (barrier_fd < 0)
        return;
    if (send(barrier_fd, &c, 1, MSG_NOSIGNAL) != 1 || read(barrier_fd, &c, 1) != 1 || c != 'g')
        die(3, "the barrier across hosts broke before %s: another host stopped early (see its stderr)", what);
}

/* The barrier's server: N parties connect and say hello; then each round every party sends one byte
 * and all are answered when the last one has. Exits 0 when all parties have left together. */
static int serve_barrier(const char *spec, long parties)
{
    struct addrinfo *ai = resolve(spec, 1);
    int one = 1, lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, (int)parties + 8))
        die(3, "cannot listen on %s: %s", spec, strerror(errno));
    freeaddrinfo(ai);
    int *fds = calloc((size_t)parties, sizeof *fds);
    if (!fds)
        die(3, "out of memory for %ld parties", parties);
    for (long joined = 0; joined < parties;) {
        char c;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            die(3, "accepting parties on %s: %s", spec, strerror(errno));
        }
        if (read(fd, &c, 1) == 1 && c == 'h') {
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            fds[joined++] = fd;
        } else {
            close(fd);   /* a probe that only checked the port is open */
        }
    }
    close(lfd);
    printf("metabench barrier: %ld parties joined\n", parties);
    fflush(stdout);
    for (long round = 1;; round++) {
        long left = 0;
        for (long k = 0; k < parties; k++) {
            char c;
            ssize_t n = read(fds[k], &c, 1);
            left += n != 1;
        }
        if (left == parties) {
            printf("metabench barrier: %ld rounds, every party left\n", round - 1);
            return 0;
        }
        if (left)   /* some stopped early: the others must not wait forever */
            die(1, "round %ld: %ld of %ld parties left early", round, left, parties);
        for (long k = 0; k < parties; k++)
            if (send(fds[k], "g", 1, MSG_NOSIGNAL) != 1)
                die(1, "round %ld: a party is gone: %s", round, strerror(errno));
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* options                                                                                           */

struct options {
    const char *mode, *dir, *output, *barrier, *listen, *counters, *counters_prefix;
    char *ops;
    long iterations, warmup, threads, files, bytes, parties;
    double cache_wait;
};

static long number(const char *opt, const char *text, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        die(2, "--%s must be a whole number from %ld to %ld, got '%s'", opt, lo, hi, text);
    return v;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: metabench calls --dir DIR --output FILE [--ops LIST] [--iterations N] [--warmup N]\n"
            "                       [--cache-wait SECONDS] [--counters NAME --counters-prefix PREFIX]\n"
            "       metabench concurrency --dir DIR --output FILE [--ops LIST] [--threads T] [--files N]\n"
            "                       [--bytes B]\n"
            "       (both: [--barrier HOST:PORT] to start each operation together with other hosts)\n"
            "       metabench barrier --listen HOST:PORT --parties N\n"
            "       metabench --version | --list\n");
}

static void list_ops(void)
{
    printf("calls:");
    for (size_t k = 0; k < N_CALL_OPS; k++)
        printf(" %s", CALL_OPS[k].name);
    printf("\nconcurrency:");
    for (int k = 0; k < N_CONCURRENT_OPS; k++)
        printf(" %s", CONCURRENT_OPS[k]);
    printf("\n");
}

static struct options parse_options(int argc, char **argv)
{
    static const struct option longs[] = {
        {"dir", required_argument, NULL, 'd'},        {"output", required_argument, NULL, 'o'},
        {"ops", required_argument, NULL, 'O'},        {"iterations", required_argument, NULL, 'n'},
        {"warmup", required_argument, NULL, 'w'},     {"cache-wait", required_argument, NULL, 'c'},
        {"threads", required_argument, NULL, 't'},    {"files", required_argument, NULL, 'f'},
        {"bytes", required_argument, NULL, 'b'},      {"help", no_argument, NULL, 'h'},
        {"barrier", required_argument, NULL, 'B'},    {"listen", required_argument, NULL, 'L'},
        {"parties", required_argument, NULL, 'P'},   {"counters", required_argument, NULL, 'C'},
        {"counters-prefix", required_argument, NULL, 'X'},
        {NULL, 0, NULL, 0}};
    struct options o = {.iterations = 100, .warmup = 10, .threads = 1, .files = 100};
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("metabench %s\n", VERSION);
        exit(0);
    }
    if (argc >= 2 && !strcmp(argv[1], "--list")) {
        list_ops();
        exit(0);
    }
    if (argc < 2 || (strcmp(argv[1], "calls") && strcmp(argv[1], "concurrency") && strcmp(argv[1], "barrier"))) {
        usage(stderr);
        exit(2);
    }
    o.mode = argv[1];
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'd': o.dir = optarg; break;
        case 'o': o.output = optarg; break;
        case 'O': o.ops = optarg; break;
        case 'n': o.iterations = number("iterations", optarg, 1, MAX_ITERATIONS); break;
        case 'w': o.warmup = number("warmup", optarg, 0, MAX_ITERATIONS); break;
        case 't': o.threads = number("threads", optarg, 1, MAX_THREADS); break;
        case 'f': o.files = number("files", optarg, 1, MAX_ITERATIONS); break;
        case 'b': o.bytes = number("bytes", optarg, 0, 1L << 30); break;
        case 'B': o.barrier = optarg; break;
        case 'L': o.listen = optarg; break;
        case 'P': o.parties = number("parties", optarg, 1, MAX_THREADS); break;
        case 'C': o.counters = optarg; break;
        case 'X': o.counters_prefix = optarg; break;
        case 'c': {
            char *end;
            o.cache_wait = strtod(optarg, &end);
            if (end == optarg || *end || !(o.cache_wait >= 0 && o.cache_wait <= 3600))
                die(2, "--cache-wait must be seconds from 0 to 3600, got '%s'", optarg);
            break;
        }
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind < argc)
        die(2, "unexpected argument '%s'", argv[optind]);
    if (!strcmp(o.mode, "barrier")) {
        if (!o.listen || !o.parties)
            die(2, "barrier needs --listen HOST:PORT and --parties N");
        return o;
    }
    if (!o.dir || !o.output)
        die(2, "--dir and --output are required");
    if (!o.counters != !o.counters_prefix || (o.counters && (strchr(o.counters, '/') || !*o.counters_prefix)))
        die(2, "--counters NAME (a file at the mount's root) and --counters-prefix PREFIX go together");
    if (o.threads * o.files > MAX_ITERATIONS)
        die(2, "--threads x --files must be at most %ld", MAX_ITERATIONS);
    return o;
}

/* The operations asked for, in the order given: indexes into names[], or an error naming the unknown. */
static int select_ops(char *list, const char *const *names, size_t n, int *picked)
{
    int count = 0;
    if (!list) {
        for (size_t k = 0; k < n; k++)
            picked[count++] = (int)k;
        return count;
    }
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < n && strcmp(names[k], tok))
            k++;
        if (k == n) {
            if (!strcmp(tok, "newchunk"))
                die(2, "newchunk is JuiceFS-internal (a chunk id from the metadata engine inside a write): "
                       "no system call reaches it through a mount");
            fprintf(stderr, "metabench: unknown operation '%s'; known:", tok);
            for (size_t j = 0; j < n; j++)
                fprintf(stderr, " %s", names[j]);
            fputc('\n', stderr);
            exit(2);
        }
        for (int j = 0; j < count; j++)
            if (picked[j] == (int)k)
                die(2, "operation '%s' is listed twice", tok);
        picked[count++] = (int)k;
    }
    if (!count)
        die(2, "--ops lists no operation");
    return count;
}

/* ------------------------------------------------------------------------------------------------ */
/* the JSON document around both modes                                                               */

struct run {
    struct options o;
    char counters[PATH_MAX];    /* the metadata-request counters file at the mount's root ("" without) */
    char work[PATH_MAX];        /* DIR/metabench.<pid> */
    char part[PATH_MAX];        /* OUTPUT.part */
    int workfd;
    FILE *out;
    int failed;
    int picked[N_CALL_OPS];     /* the operations asked for, in order */
    int count;
};

static void json_head(struct run *r)
{
    char host[256] = "";
    char real[PATH_MAX];
    struct utsname u;
    struct statfs fs;
    gethostname(host, sizeof host - 1);
    uname(&u);
    FILE *f = r->out;
    fprintf(f, "{\n  \"tool\": \"metabench\", \"version\": \"%s\", \"schema\": %d, \"mode\": ", VERSION, SCHEMA);
    json_str(f, r->o.mode);
    fprintf(f, ",\n  \"host\": ");
    json_str(f, host);
    fprintf(f, ", \"kernel\": ");
    json_str(f, u.release);
    fprintf(f, ", \"dir\": ");
    json_str(f, realpath(r->o.dir, real) ? real : r->o.dir);
    fprintf(f, ", \"fs_magic\": \"0x%lx\", \"barrier\": ", fstatfs(r->workfd, &fs) ? 0UL : (unsigned long)fs.f_type);
    if (r->o.barrier)
        json_str(f, r->o.barrier);
    else
        fputs("null", f);
    fputs(",\n", f);
    fprintf(f, "  \"clock\": \"CLOCK_MONOTONIC\", \"timer_overhead_ns\": %llu, \"started\": %.6f,\n",
            (unsigned long long)timer_overhead(), wall_s());
}

static void json_op_head(FILE *f, int first, const char *name)
{
    fprintf(f, "%s    {\"name\": ", first ? "" : ",\n");
    json_str(f, name);
}

static void json_error(FILE *f, const char *status, const char *where, int err)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s", where, strerror(err));
    fprintf(f, ", \"status\": \"%s\", \"errno\": %d, \"error\": ", status, err);
    json_str(f, msg);
}

/* ------------------------------------------------------------------------------------------------ */
/* mode `calls`                                                                                      */

/* An operation's objects, laid out before its timed calls (untimed). */
struct prepared {
    struct call_ctx c;
    int done, err;
    uint64_t at;                /* when its setup ended (CLOCK_MONOTONIC) */
};

static void prepare_op(struct run *r, const struct call_op *op, struct prepared *p, char *buf)
{
    char folder[NAME_MAX_LEN + 8];
    p->c = (struct call_ctx){.dfd = -1, .fd = -1, .buf = buf, .buflen = LIST_BUF};
    p->done = 1;
    snprintf(folder, sizeof folder, "op.%s", op->name);
    if (mkdirat(r->workfd, folder, 0755) ||
        (p->c.dfd = openat(r->workfd, folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        p->err = errno;
    else if (op->setup && op->setup(&p->c, r->o.warmup + r->o.iterations))
        p->err = errno;
    p->at = now_ns();
}

/* ------------------------------------------------------------------------------------------------ */
/* --counters: the client's own count of its metadata-engine requests, read around each timed call   */

#define MAX_COUNTERS 64
#define COUNTED_CALLS 20        /* timed calls of an operation whose metadata-engine requests are counted */
#define COUNTER_NAME 48
#define COUNTERS_BUF (256 * 1024)

struct counters {
    int n;
    char name[MAX_COUNTERS][COUNTER_NAME];
    double value[MAX_COUNTERS];
};

static char counters_text[COUNTERS_BUF + 1];

static int counter_slot(struct counters *c, const char *name)
{
    for (int k = 0; k < c->n; k++)
        if (!strcmp(c->name[k], name))
            return k;
    if (c->n == MAX_COUNTERS)
        return -1;
    snprintf(c->name[c->n], COUNTER_NAME, "%s", name);
    c->value[c->n] = 0;
    return c->n++;
}

/* The lines `PREFIX<what> <value>` of the counters file; -1 with errno when it cannot be read. */
static int read_counters(const struct run *r, struct counters *out)
{
    int fd = open(r->counters, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    ssize_t n;
    while (got < COUNTERS_BUF && (n = read(fd, counters_text + got, COUNTERS_BUF - got)) > 0)
        got += (size_t)n;
    int err = n < 0 ? errno : 0;
    close(fd);
    if (err) {
        errno = err;
        return -1;
    }
    counters_text[got] = 0;
    out->n = 0;
    size_t plen = strlen(r->o.counters_prefix);
    for (char *save = NULL, *line = strtok_r(counters_text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, r->o.counters_prefix, plen))
            continue;
        char *what = line + plen, *space = strchr(what, ' ');
        if (!space || space == what || (size_t)(space - what) >= COUNTER_NAME)
            continue;
        *space = 0;
        char *end;
        double v = strtod(space + 1, &end);
        int k = counter_slot(out, what);
        if (end != space + 1 && k >= 0)
            out->value[k] = v;
    }
    return 0;
}

/* Add after - before to sum, name by name (a name first seen after the call counted from 0). */
static void add_counted(struct counters *sum, const struct counters *before, const struct counters *after)
{
    for (int k = 0; k < after->n; k++) {
        double was = 0;
        for (int j = 0; j < before->n; j++)
            if (!strcmp(before->name[j], after->name[k]))
                was = before->value[j];
        int s = counter_slot(sum, after->name[k]);
        if (s >= 0 && after->value[k] > was)
            sum->value[s] += after->value[k] - was;
    }
}

/* The counters file at the root of the mount holding dir: up the folders while the device stays. */
static void find_counters(struct run *r)
{
    char at[PATH_MAX], up[PATH_MAX + 4];
    struct stat here, parent;
    if (!r->o.counters)
        return;
    if (!realpath(r->o.dir, at) || stat(at, &here))
        die(3, "cannot resolve %s: %s", r->o.dir, strerror(errno));
    while (strcmp(at, "/")) {
        snprintf(up, sizeof up, "%s/..", at);
        if (stat(up, &parent) || parent.st_dev != here.st_dev)
            break;
        char *slash = strrchr(at, '/');
        if (slash == at)
            slash[1] = 0;
        else
            *slash = 0;
    }
    if (snprintf(r->counters, sizeof r->counters, "%s/%s", strcmp(at, "/") ? at : "", r->o.counters)
        >= (int)sizeof r->counters)
        die(2, "--counters: the path is too long");
}

static void json_counted(FILE *f, const struct counters *sum, long calls)
{
    double total = 0;
    for (int k = 0; k < sum->n; k++)
        total += sum->value[k];
    fprintf(f, ", \"engine_requests\": %.0f, \"engine_calls\": %ld, \"engine_by\": {", total, calls);
    for (int k = 0, shown = 0; k < sum->n; k++) {
        if (sum->value[k] <= 0)
            continue;
        fprintf(f, "%s", shown++ ? ", " : "");
        json_str(f, sum->name[k]);
        fprintf(f, ": %.0f", sum->value[k]);
    }
    fputc('}', f);
}

/* Until the kernel's entry cache of objects made at `at` has expired (--cache-wait after their setup). */
static void wait_cache(const struct run *r, uint64_t at)
{
    uint64_t until = at + (uint64_t)(r->o.cache_wait * 1e9), now = now_ns();
    if (now >= until)
        return;
    struct timespec ts = {(time_t)((until - now) / 1000000000ULL), (long)((until - now) % 1000000000ULL)};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

/* One operation, prepared: warm-up and timed iterations, then its folder removed. */
static void run_call_op(struct run *r, const struct call_op *op, int first, uint64_t *samples, struct prepared *p)
{
    long warm = r->o.warmup, total = r->o.warmup + r->o.iterations, i = 0;
    struct call_ctx c = p->c;
    char path[PATH_MAX + NAME_MAX_LEN + 16];
    enum { SETUP, PREPARE, CALL, AFTER } stage = SETUP;
    double started = wall_s();
    int err = p->err, counted = r->counters[0] != 0, counter_err = 0;
    long sampled = 0;
    static struct counters before, after, sum;
    sum.n = 0;
    FILE *f = r->out;
    if (op->cold && !err)
        wait_cache(r, p->at);
    barrier_wait(op->name);   /* every host ready (its setup done, or failed: the rounds stay in step) */
    if (err)
        goto done;
    started = wall_s();
    for (i = 0; i < total; i++) {
        stage = PREPARE;
        if (op->prep && op->prep(&c, i)) {
            err = errno;
            break;
        }
        stage = CALL;
        /* COUNTED_CALLS timed calls, spread evenly over them: two reads of the counters file cost about a
         * millisecond (the client renders every metric), which at 1,000 calls per operation would dwarf them */
        long stride = r->o.iterations > COUNTED_CALLS ? r->o.iterations / COUNTED_CALLS : 1;
        int counting = counted && !counter_err && i >= warm && (i - warm) % stride == 0
                       && (i - warm) / stride < COUNTED_CALLS;
        sampled += counting;
        if (counting && read_counters(r, &before))
            counter_err = errno;
        uint64_t t0 = now_ns();
        int rc = op->call(&c, i);
        uint64_t t1 = now_ns();
        if (rc) {
            err = errno;
            break;
        }
        if (counting && !counter_err) {
            if (read_counters(r, &after))
                counter_err = errno;
            else
                add_counted(&sum, &before, &after);
        }
        stage = AFTER;
        if (op->post && op->post(&c, i)) {
            err = errno;
            break;
        }
        if (i >= warm)
            samples[i - warm] = t1 - t0;
    }
done:
    json_op_head(f, first, op->name);
    fprintf(f, ", \"calls\": ");
    json_str(f, op->calls);
    if (err) {
        /* the file system does not offer the call: data, not a failure of the run */
        int unsup = unsupported(err, stage == CALL);
        char where[200];
        if (stage == SETUP)
            snprintf(where, sizeof where, "preparing its objects (untimed)");
        else
            snprintf(where, sizeof where, "%s (iteration %ld)", stage == CALL ? op->calls
                     : stage == PREPARE ? "preparing the iteration (untimed)" : "after the call (untimed)", i);
        json_error(f, unsup ? "unsupported" : "failed", where, err);
        if (!unsup) {
            r->failed = 1;
            fprintf(stderr, "metabench: %s: %s: %s\n", op->name, where, strerror(err));
        }
        fprintf(f, ", \"count\": 0}");
    } else {
        struct stats s = summarise(samples, r->o.iterations);
        fprintf(f, ", \"status\": \"ok\", ");
        json_stats(f, &s);
        if (counted && !counter_err)
            json_counted(f, &sum, sampled);
        else if (counted) {
            fprintf(f, ", \"engine_error\": ");
            json_str(f, strerror(counter_err));
        }
        fprintf(f, ", \"started\": %.6f, \"ended\": %.6f}", started, wall_s());
    }
    if (c.fd >= 0)
        close(c.fd);
    if (c.dfd >= 0)
        close(c.dfd);
    snprintf(path, sizeof path, "%s/op.%s", r->work, op->name);
    if (remove_tree(path) && errno != ENOENT) {
        fprintf(stderr, "metabench: removing %s: %s\n", path, strerror(errno));
        r->failed = 1;
    }
    fflush(f);
}

static void run_calls(struct run *r)
{
    uint64_t *samples = malloc(sizeof *samples * (size_t)(r->o.iterations + 1));
    char *buf = malloc(LIST_BUF);
    if (!samples || !buf)
        die(3, "out of memory for %ld samples", r->o.iterations);
    json_head(r);
    fprintf(r->out, "  \"iterations\": %ld, \"warmup\": %ld, \"cache_wait_s\": %g,\n",
            r->o.iterations, r->o.warmup, r->o.cache_wait);
    if (r->counters[0]) {
        fprintf(r->out, "  \"counters\": ");
        json_str(r->out, r->counters);
        fprintf(r->out, ", \"counters_prefix\": ");
        json_str(r->out, r->o.counters_prefix);
        fprintf(r->out, ",\n");
    }
    fprintf(r->out, "  \"operations\": [\n");
    struct prepared prep[N_CALL_OPS];
    memset(prep, 0, sizeof prep);
    for (int k = 0; k < r->count; k++) {
        const struct call_op *op = &CALL_OPS[r->picked[k]];
        /* the first operation that needs expired entry caches lays out the objects of all of them, so
         * that one --cache-wait serves them all */
        for (int j = k; op->cold && j < r->count; j++)
            if (CALL_OPS[r->picked[j]].cold && !prep[j].done)
                prepare_op(r, &CALL_OPS[r->picked[j]], &prep[j], buf);
        if (!prep[k].done)
            prepare_op(r, op, &prep[k], buf);
        run_call_op(r, op, k == 0, samples, &prep[k]);
    }
    free(samples);
    free(buf);
}

/* ------------------------------------------------------------------------------------------------ */
/* mode `concurrency`                                                                                */

enum { CREATE_WRITE, OPEN_READ, RENAME, DELETE };

struct shared {
    int dfd;                        /* the folder every thread works in, as NNBench's maps share one */
    long files;
    size_t bytes;
    pthread_barrier_t start, end;
    int phase;                      /* the operation of the current phase; -1: threads leave */
    char name;                      /* the files' current first letter: f, then r after a rename */
};

struct worker {
    struct shared *sh;
    pthread_t id;
    long index;
    uint64_t *samples;              /* this thread's latencies of the current phase */
    long done, errors;
    int first_errno;
    uint64_t started, ended;
    char *buf;
};

static int one_op(struct worker *w, int phase, const char *a, const char *b)
{
    struct shared *sh = w->sh;
    int fd, err;
    ssize_t n = 0;
    size_t off = 0;
    switch (phase) {
    case CREATE_WRITE:   /* NNBench's create_write: create, write the bytes, close */
        if ((fd = openat(sh->dfd, a, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644)) < 0)
            return -1;
        while (off < sh->bytes && (n = write(fd, w->buf + off, sh->bytes - off)) > 0)
            off += (size_t)n;
        break;
    case OPEN_READ:      /* open_read: open, read the bytes, close */
        if ((fd = openat(sh->dfd, a, O_RDONLY | O_CLOEXEC)) < 0)
            return -1;
        while (off < sh->bytes && (n = read(fd, w->buf + off, sh->bytes - off)) > 0)
            off += (size_t)n;
        n = n < 0 ? -1 : 0;  /* a file shorter than the bytes is read to its end */
        break;
    case RENAME:
        return renameat(sh->dfd, a, sh->dfd, b);
    default:
        return unlinkat(sh->dfd, a, 0);
    }
    err = n < 0 ? errno : (phase == CREATE_WRITE && off < sh->bytes ? EIO : 0);
    if (close(fd) && !err)
        err = errno;
    errno = err;
    return err ? -1 : 0;
}

static void file_name(char *out, char kind, long thread, long j)
{
    snprintf(out, NAME_MAX_LEN, "%c%05ld.%09ld", kind, thread, j);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    char a[NAME_MAX_LEN], b[NAME_MAX_LEN];
    for (;;) {
        pthread_barrier_wait(&sh->start);
        int phase = sh->phase;
        if (phase < 0)
            return NULL;
        w->done = w->errors = 0;
        w->first_errno = 0;
        w->started = now_ns();
        for (long j = 0; j < sh->files; j++) {
            file_name(a, sh->name, w->index, j);
            if (phase == RENAME)
                file_name(b, 'r', w->index, j);
            uint64_t t0 = now_ns();
            int rc = one_op(w, phase, a, b);
            uint64_t t1 = now_ns();
            if (rc) {
                if (!w->errors++)
                    w->first_errno = errno;
                continue;
            }
            w->samples[w->done++] = t1 - t0;
        }
        w->ended = now_ns();
        pthread_barrier_wait(&sh->end);
    }
}

/* The files a phase needs when no earlier phase made them (open_read alone...): created untimed. */
static int make_files(struct shared *sh, long threads)
{
    char a[NAME_MAX_LEN];
    for (long t = 0; t < threads; t++)
        for (long j = 0; j < sh->files; j++) {
            file_name(a, 'f', t, j);
            if (make_file(sh->dfd, a))
                return -1;
        }
    return 0;
}

/* One phase: every thread released by the barrier at once, their samples gathered into `all`. */
static void run_phase(struct run *r, struct shared *sh, struct worker *ws, uint64_t *all, int phase, int first)
{
    long threads = r->o.threads;
    FILE *f = r->out;
    json_op_head(f, first, CONCURRENT_OPS[phase]);
    sh->phase = phase;
    barrier_wait(CONCURRENT_OPS[phase]);   /* every host ready */
    double started = wall_s();
    pthread_barrier_wait(&sh->start);   /* every thread is waiting here: they leave together */
    pthread_barrier_wait(&sh->end);
    double ended = wall_s();
    uint64_t first_start = UINT64_MAX, last_start = 0, last_end = 0;
    long done = 0, errors = 0;
    int first_errno = 0;
    for (long t = 0; t < threads; t++) {
        struct worker *w = &ws[t];
        first_start = w->started < first_start ? w->started : first_start;
        last_start = w->started > last_start ? w->started : last_start;
        last_end = w->ended > last_end ? w->ended : last_end;
        if (w->errors && !first_errno)
            first_errno = w->first_errno;
        errors += w->errors;
        /* into one block for the percentiles (thread t's block starts at t x files >= done) */
        memmove(all + done, w->samples, sizeof *all * (size_t)w->done);
        done += w->done;
    }
    uint64_t wall = last_end - first_start;
    struct stats s = summarise(all, done);
    fprintf(f, ", \"status\": \"%s\", ", errors ? "failed" : "ok");
    json_stats(f, &s);
    fprintf(f, ", \"errors\": %ld, \"wall_ns\": %llu, \"rate\": %.3f, \"start_spread_ns\": %llu, "
            "\"started\": %.6f, \"ended\": %.6f", errors, (unsigned long long)wall,
            wall ? (double)done * 1e9 / (double)wall : 0.0, (unsigned long long)(last_start - first_start),
            started, ended);
    if (errors) {
        char where[96];
        snprintf(where, sizeof where, "%ld of %ld %s", errors, threads * sh->files, CONCURRENT_OPS[phase]);
        json_error(f, "failed", where, first_errno);
        fprintf(stderr, "metabench: %s: %s\n", where, strerror(first_errno));
        r->failed = 1;
    }
    fputc('}', f);
    fflush(f);
}

static void run_concurrency(struct run *r)
{
    long threads = r->o.threads, files = r->o.files;
    struct shared sh = {.files = files, .bytes = (size_t)r->o.bytes, .phase = -1, .name = 'f'};
    struct worker *ws = calloc((size_t)threads, sizeof *ws);
    uint64_t *all = malloc(sizeof *all * (size_t)(threads * files + 1));
    pthread_attr_t attr;
    if (!ws || !all)
        die(3, "out of memory for %ld x %ld samples", threads, files);
    if (mkdirat(r->workfd, "files", 0755) ||
        (sh.dfd = openat(r->workfd, "files", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        die(3, "cannot make its folder in %s: %s", r->work, strerror(errno));
    if (pthread_barrier_init(&sh.start, NULL, (unsigned)threads + 1) ||
        pthread_barrier_init(&sh.end, NULL, (unsigned)threads + 1))
        die(3, "cannot make the start barrier for %ld threads", threads);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);   /* thousands of threads need no 8 MiB stacks */
    for (long t = 0; t < threads; t++) {
        ws[t].sh = &sh;
        ws[t].index = t;
        ws[t].samples = all + t * files;
        if (!(ws[t].buf = malloc(sh.bytes + 1)))
            die(3, "out of memory for the I/O buffers");
        memset(ws[t].buf, 'm', sh.bytes + 1);
        int err = pthread_create(&ws[t].id, &attr, worker_main, &ws[t]);
        if (err)
            die(3, "cannot start thread %ld of %ld: %s", t + 1, threads, strerror(err));
    }
    json_head(r);
    fprintf(r->out, "  \"threads\": %ld, \"files_per_thread\": %ld, \"bytes\": %ld,\n  \"operations\": [\n",
            threads, files, r->o.bytes);
    for (int k = 0; k < r->count; k++) {
        int phase = r->picked[k];
        if (phase != CREATE_WRITE && k == 0 && make_files(&sh, threads)) {
            json_op_head(r->out, 1, CONCURRENT_OPS[phase]);
            json_error(r->out, "failed", "creating the files it needs (untimed)", errno);
            fprintf(r->out, ", \"count\": 0}");
            fprintf(stderr, "metabench: %s: creating its files: %s\n", CONCURRENT_OPS[phase], strerror(errno));
            r->failed = 1;
            break;
        }
        run_phase(r, &sh, ws, all, phase, k == 0);
        if (phase == RENAME)
            sh.name = 'r';
    }
    sh.phase = -1;
    pthread_barrier_wait(&sh.start);
    for (long t = 0; t < threads; t++) {
        pthread_join(ws[t].id, NULL);
        free(ws[t].buf);
    }
    pthread_attr_destroy(&attr);
    close(sh.dfd);
    free(ws);
    free(all);
}

/* ------------------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    struct run r = {.o = parse_options(argc, argv), .workfd = -1};
    struct stat st;
    if (!strcmp(r.o.mode, "barrier"))
        return serve_barrier(r.o.listen, r.o.parties);
    if (!strcmp(r.o.mode, "calls")) {
        const char *names[N_CALL_OPS];
        for (size_t k = 0; k < N_CALL_OPS; k++)
            names[k] = CALL_OPS[k].name;
        r.count = select_ops(r.o.ops, names, N_CALL_OPS, r.picked);
    } else {
        r.count = select_ops(r.o.ops, CONCURRENT_OPS, N_CONCURRENT_OPS, r.picked);
        for (int k = 1; k < r.count; k++)
            if (r.picked[k] < r.picked[k - 1])
                die(2, "concurrency operations run in the order create_write, open_read, rename, delete: "
                       "%s cannot come after %s", CONCURRENT_OPS[r.picked[k]], CONCURRENT_OPS[r.picked[k - 1]]);
    }
    if (stat(r.o.dir, &st) || !S_ISDIR(st.st_mode))
        die(2, "--dir %s is not a folder", r.o.dir);
    if (r.o.counters && strcmp(r.o.mode, "calls"))
        die(2, "--counters is an option of mode calls");
    find_counters(&r);
    if (strlen(r.o.dir) > PATH_MAX - 64 || strlen(r.o.output) > PATH_MAX - 16)
        die(2, "--dir and --output must be shorter than %d bytes", PATH_MAX - 64);
    snprintf(r.part, sizeof r.part, "%s.part", r.o.output);
    if (!(r.out = fopen(r.part, "w")))
        die(3, "cannot write %s: %s", r.part, strerror(errno));
    snprintf(r.work, sizeof r.work, "%s/metabench.%ld", r.o.dir, (long)getpid());
    if (mkdir(r.work, 0755) || (r.workfd = open(r.work, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        int err = errno;
        unlink(r.part);
        die(3, "cannot make its working folder %s: %s", r.work, strerror(err));
    }
    if (r.o.barrier)
        barrier_join(r.o.barrier);
    if (!strcmp(r.o.mode, "calls"))
        run_calls(&r);
    else
        run_concurrency(&r);
    fprintf(r.out, "\n  ],\n  \"ended\": %.6f, \"complete\": true\n}\n", wall_s());
    close(r.workfd);
    if (remove_tree(r.work) && errno != ENOENT) {
        fprintf(stderr, "metabench: removing %s: %s\n", r.work, strerror(errno));
        r.failed = 1;
    }
    if (fflush(r.out) || fsync(fileno(r.out)) || fclose(r.out) || rename(r.part, r.o.output))
        die(3, "cannot write %s: %s", r.o.output, strerror(errno));
    return r.failed ? 1 : 0;
}
