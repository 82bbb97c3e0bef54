package fsbench;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.NNBench;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.util.GenericOptionsParser;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;

/**
 * Runs Hadoop's NNBench several times in one JVM, one operation after the other, on one base folder.
 *
 * <p>Each run is NNBench's own code, called step by step: parse its arguments, validate them, clean
 * up; then the control files (as NNBench writes them, 16 at a time instead of one by one), the start
 * barrier, the MapReduce job (local mode: one thread per map) and NNBench's analysis into
 * NNBench_results.log. The start barrier is set only after the control files exist, so it covers
 * the job's start and not the file system's speed at creating them: now + the larger of -barrierMs
 * (plus 20 ms per map) and 1.5 x the time the maps of the previous run took to reach the barrier.
 * MapReduce's classes are loaded before the first run, by a job of one map on a folder of the local
 * file system (nothing reaches the file system under test, nothing goes to NNBench_results.log): the
 * first run's maps then arrive about as a later run's do, and it gets the same barrier, or the warm-up's
 * own time when that was longer: on a loaded host both loadings take seconds (-firstBarrierMs sets another
 * least; the first run's arrival does not size the second's). How many maps waited at the barrier is counted
 * from NNBench's own log line; a map that did not wait started late. A measured run with late maps is
 * done again with a longer barrier, so that every map of the measurement runs together: create_write
 * and open_read as they are (create_write starts from scratch, open_read changes nothing), rename and
 * delete after a create_write (role setup) that gives them their files back. After three tries the
 * late maps are reported (the barrier doubles each time).
 *
 * <p>Across hosts ({@code -barrier HOST:PORT}, a {@code metabench barrier} server that every host's
 * runner joins), each run waits there after its control files exist and before its start time is set,
 * so that every host starts each operation together and none renames while another still reads. The
 * start time is then the same on every host: now + -barrierMs plus 20 ms per map of -barrierMaps (the
 * largest host's share: each host's own count of maps would give hosts with fewer maps an earlier start;
 * -firstBarrierMs for the first run when given), without the adaptive part (it is each host's own) and without doing a late
 * run again (another host would not know): late maps are reported instead. Every run, a failed one too,
 * waits there exactly once, so the hosts stay in step.
 *
 * <pre>
 * NNBenchRuns [-D key=value ...] -runs create_write,open_read,rename,create_write:setup,delete
 *             [-barrierMs 1500] [-firstBarrierMs MS] [-barrier HOST:PORT [-barrierMaps N]] [-cleanup] NNBENCH_OPTIONS (-baseDir URL -maps N -numberOfFiles F ...)
 * </pre>
 *
 * For the warm-up one line goes to standard output, {@code fsbench-nnbench warmup ms=T exit=E} (E 1: it
 * failed, and the first run loads the classes itself), and for every run one:
 * {@code fsbench-nnbench run=N operation=OP role=measured|setup maps=M control_ms=C barrier_ms=B
 * on_time=W exit=E}, and {@code fsbench-nnbench run=N role=late: ...} after a run that is done again
 * (it is not a measurement). A run marked {@code :setup} prepares the next one (delete needs the files
 * that rename moved away) and is not a measurement either. Exits 1 when any run failed, 2 on bad
 * arguments.
 */
public final class NNBenchRuns {
  private static final String BARRIER_LINE = "Waiting in barrier for";
  private static final int CONTROL_WRITERS = 16;
  private static final long PER_MAP_MS = 20;
  /** The first run's least barrier when the warm-up failed, so that its maps load all of MapReduce themselves. */
  private static final long FIRST_BARRIER_COLD_MS = 6000;
  private static final int MAX_REDOS = 2;
  /** Operations that use up the files create_write made: done again, they need them made again first. */
  private static final List<String> NEEDS_FILES_AGAIN = Arrays.asList("rename", "delete");

  private NNBenchRuns() {
  }

  /** A party of metabench's barrier server: one byte each way per round over TCP ('h' joins, 'r' waits, 'g' goes). */
  static final class HostBarrier implements AutoCloseable {
    private static final int JOIN_TRIES = 300;
    private final Socket socket;
    private final String where;

    /** Joins the barrier at HOST:PORT ([IPv6]:PORT), retrying for 30 s while its server starts. */
    HostBarrier(String where) throws IOException, InterruptedException {
      this.where = where;
      this.socket = join(where);
    }

    private static Socket join(String where) throws IOException, InterruptedException {
      int colon = where.lastIndexOf(':');
      if (colon <= 0) {
        throw new IOException("-barrier " + where + " is not HOST:PORT");
      }
      String host = where.substring(0, colon).replaceAll("^\\[|\\]$", "");
      int port;
      try {
        port = Integer.parseInt(where.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IOException("-barrier " + where + " is not HOST:PORT");
      }
      IOException last = null;
      for (int attempt = 0; attempt < JOIN_TRIES; attempt++) {
        Socket s = new Socket();
        try {
          s.connect(new InetSocketAddress(host, port), 2000);
          s.setTcpNoDelay(true);
          // a party says hello: the server takes a connection without it for a probe of its port
          s.getOutputStream().write('h');
          s.getOutputStream().flush();
          return s;
        } catch (IOException e) {
          last = e;
          s.close();
          Thread.sleep(100);
        }
      }
      throw new IOException("cannot reach the barrier across hosts at " + where + " for 30 s: " + last);
    }

    /** Waits until every host has reached this point; Broken when another host or the server is gone. */
    void await(String what) {
      try {
        OutputStream out = socket.getOutputStream();
        InputStream in = socket.getInputStream();
        out.write('r');
        out.flush();
        if (in.read() == 'g') {
          return;
        }
      } catch (IOException e) {
        // as a missing answer: the hosts are out of step either way
      }
      throw new Broken("the barrier across hosts at " + where + " broke before " + what
          + ": another host stopped early (see its stderr and the barrier's server.out)");
    }

    /** The hosts can no longer run in step: the runner stops. */
    static final class Broken extends RuntimeException {
      private static final long serialVersionUID = 1L;

      Broken(String message) {
        super(message);
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  /** Counts NNBench's "Waiting in barrier for" lines: one per map that reached the barrier in time. */
  static final class BarrierCounter extends AppenderSkeleton {
    final AtomicInteger waits = new AtomicInteger();
    final AtomicLong lastArrival = new AtomicLong();

    void reset() {
      waits.set(0);
      lastArrival.set(0);
    }

    @Override
    protected void append(LoggingEvent event) {
      Object message = event.getMessage();
      if (message != null && message.toString().startsWith(BARRIER_LINE)) {
        waits.incrementAndGet();
        lastArrival.accumulateAndGet(event.getTimeStamp(), Math::max);
      }
    }

    @Override
    public void close() {
    }

    @Override
    public boolean requiresLayout() {
      return false;
    }
  }

  public static void main(String[] argv) throws Exception {
    // a JobConf reads mapred-default.xml and mapred-site.xml too (the local MapReduce settings)
    Configuration conf = new JobConf();
    String[] rest = new GenericOptionsParser(conf, argv).getRemainingArgs();
    List<String> common = new ArrayList<>();
    String[] runs = null;
    long barrierMs = 1500;
    long firstBarrierMs = -1;  // -1: as a later run's
    long barrierMaps = -1;  // -1: this host's own -maps
    String across = null;
    boolean cleanup = false;
    String baseDir = null;
    long maps = 1;
    for (int i = 0; i < rest.length; i++) {
      String a = rest[i];
      if (a.equals("-runs") && i + 1 < rest.length) {
        runs = rest[++i].split(",");
      } else if (a.equals("-barrierMs") && i + 1 < rest.length) {
        barrierMs = Long.parseLong(rest[++i]);
      } else if (a.equals("-firstBarrierMs") && i + 1 < rest.length) {
        firstBarrierMs = Long.parseLong(rest[++i]);
      } else if (a.equals("-barrierMaps") && i + 1 < rest.length) {
        barrierMaps = Long.parseLong(rest[++i]);
      } else if (a.equals("-barrier") && i + 1 < rest.length) {
        across = rest[++i];
      } else if (a.equals("-cleanup")) {
        cleanup = true;
      } else if (a.equals("-operation") || a.equals("-startTime")) {
        System.err.println("NNBenchRuns: " + a + " is set per run; use -runs");
        System.exit(2);
      } else {
        common.add(a);
        if (a.equals("-baseDir") && i + 1 < rest.length) {
          baseDir = rest[i + 1];
        } else if (a.equals("-maps") && i + 1 < rest.length) {
          maps = Long.parseLong(rest[i + 1]);
        }
      }
    }
    if (runs == null || baseDir == null) {
      System.err.println("usage: NNBenchRuns [-D k=v ...] -runs OP[:setup],... [-barrierMs MS] [-barrier HOST:PORT] "
          + "[-cleanup] -baseDir URL NNBENCH_OPTIONS");
      System.exit(2);
    }
    long localMax = conf.getLong("mapreduce.local.map.tasks.maximum", 1);
    if (localMax < maps) {
      System.err.println("NNBenchRuns: mapreduce.local.map.tasks.maximum=" + localMax + " is below -maps " + maps
          + ": the maps would run one after the other, not concurrently");
      System.exit(2);
    }
    // MapReduce's local job files go to a private folder, removed at the end
    Path scratch = Files.createTempDirectory("fsbench-nnbench-");
    conf.set("hadoop.tmp.dir", scratch.toString());
    conf.set("mapreduce.jobtracker.staging.root.dir", scratch.resolve("staging").toString());

    Logger nnbenchLog = Logger.getLogger(NNBench.class);
    if (!nnbenchLog.isInfoEnabled()) {
      nnbenchLog.setLevel(Level.INFO);
    }
    BarrierCounter counter = new BarrierCounter();
    nnbenchLog.addAppender(counter);

    int failed = 0;
    long arrivalMs = 0;  // how long the maps of the previous run took to reach the barrier
    int number = 0;
    HostBarrier hosts = null;
    try {
      if (across != null) {
        hosts = new HostBarrier(across);
      }
      // how long loading MapReduce took here and now: the first run's maps still load the file system's
      // own code for their operations, which takes about as long on a loaded host
      long warmMs = warmUp(conf, scratch);
      for (int n = 0; n < runs.length; n++) {
        String[] spec = runs[n].split(":", 2);
        String role = spec.length > 1 && spec[1].equals("setup") ? "setup" : "measured";
        // more maps take longer to start: each opens its control file on the file system under test
        long fixed = n == 0 && firstBarrierMs >= 0 ? firstBarrierMs
            : barrierMs + PER_MAP_MS * (barrierMaps >= 0 ? barrierMaps : maps);
        // across hosts every host must set the same start time: the adaptive part is this host's own
        long least = hosts != null ? fixed : Math.max(fixed, n == 0 ? warmMs : 3 * arrivalMs / 2);
        long[] took;
        int redone = 0;
        while (true) {
          counter.reset();
          took = runOne(conf, spec[0], common, least, counter, ++number, role, maps, baseDir, hosts);
          // a measured run whose maps did not all wait at the barrier is done again with twice the
          // barrier (at most twice) and marked `late`; setup runs measure nothing and are not redone
          boolean late = took[0] == 0 && counter.waits.get() < maps;
          // across hosts a run is not done again: the other hosts would not know to do it too
          if (!late || role.equals("setup") || hosts != null || redone++ == MAX_REDOS) {
            break;
          }
          System.out.println("fsbench-nnbench run=" + number + " role=late: done again with a longer barrier");
          // twice the barrier, twice the maps' arrival, and never less than an ordinary run's
          least = Math.max(Math.max(2 * least, 2 * took[1]), barrierMs + PER_MAP_MS * maps);
          if (NEEDS_FILES_AGAIN.contains(spec[0])) {
            // rename moved the files away and delete removed them: create_write (which starts from
            // scratch) makes them again, as before the late run
            counter.reset();
            long[] setup = runOne(conf, "create_write", common, least, counter, ++number, "setup", maps, baseDir,
                null);
            if (setup[0] != 0) {
              took = setup;
              break;
            }
          }
        }
        if (took[0] != 0) {
          failed++;
        }
        // the first run's maps still load the code of the file system's reads and writes: their arrival
        // would make the second run wait for nothing
        arrivalMs = n == 0 ? 0 : took[1];
      }
    } catch (HostBarrier.Broken | IOException e) {
      // the hosts can no longer run in step (or never could): the runs stop here
      System.err.println("NNBenchRuns: " + e.getMessage());
      failed++;
    } finally {
      if (hosts != null) {
        hosts.close();
      }
      if (cleanup) {
        org.apache.hadoop.fs.Path base = new org.apache.hadoop.fs.Path(baseDir);
        try {
          FileSystem fs = FileSystem.get(base.toUri(), conf);
          fs.delete(base, true);
        } catch (IOException e) {
          System.err.println("NNBenchRuns: could not remove " + baseDir + ": " + e);
        }
      }
      removeTree(scratch);
    }
    System.exit(failed == 0 ? 0 : 1);
  }

  /**
   * MapReduce's classes loaded and its local runner started once before the measured runs: an NNBench
   * create_write job of one map and one file on a folder of the scratch folder (the local file system),
   * without its analysis (1.0 to 1.6 s here). In a new JVM the first job's maps took 1 s to reach the
   * barrier here (2 to 4 s under load) where a later job's take 0.3 s, so the first run needed a barrier of
   * its own, 6 s long. Its one map reaches the start time (now) late and does no operation: the job is what
   * is loaded. A warm-up that fails is said and the runs go on (the first run then loads the classes, with
   * a barrier of at least 6 s, as before the warm-up). Returns the warm-up's time (ms), or those 6 s when it
   * failed: the least barrier of the first run on its own host.
   */
  private static long warmUp(Configuration base, Path scratch) {
    long t0 = System.currentTimeMillis();
    int exit = 0;
    try {
      String dir = scratch.resolve("warmup").toUri().toString();
      NNBench bench = new NNBench();
      bench.setConf(new Configuration(base));
      String[] args = {"-operation", "create_write", "-maps", "1", "-reduces", "1", "-numberOfFiles", "1",
          "-bytesToWrite", "0", "-blockSize", "1048576", "-bytesPerChecksum", "512", "-replicationFactorPerFile", "1",
          "-startTime", "0", "-baseDir", dir};
      call(bench, "parseInputs", new Class<?>[] {String[].class}, (Object) args);
      call(bench, "validateInputs", new Class<?>[0]);
      call(bench, "cleanupBeforeTestrun", new Class<?>[0]);
      createControlFiles(bench.getConf(), dir, 1);
      setStartTime(bench, System.currentTimeMillis());
      call(bench, "runTests", new Class<?>[0]);
    } catch (Exception e) {
      Throwable cause = e instanceof InvocationTargetException && e.getCause() != null ? e.getCause() : e;
      System.err.println("NNBenchRuns: the warm-up job failed (the first run loads MapReduce's classes itself): "
          + cause);
      exit = 1;
    }
    long took = System.currentTimeMillis() - t0;
    System.out.println("fsbench-nnbench warmup ms=" + took + " exit=" + exit);
    System.out.flush();
    return exit == 0 ? took : FIRST_BARRIER_COLD_MS;
  }

  /** One NNBench run; {exit status, ms from the job's submission to the last map at the barrier}. */
  private static long[] runOne(Configuration base, String operation, List<String> common, long leastBarrierMs,
                               BarrierCounter counter, int number, String role, long maps, String baseDir,
                               HostBarrier hosts) {
    NNBench bench = new NNBench();
    bench.setConf(new Configuration(base));
    List<String> args = new ArrayList<>(common);
    args.addAll(Arrays.asList("-operation", operation, "-startTime", "0"));
    long controlMs = -1;
    long barrier = -1;
    long submitted = 0;
    int exit;
    try {
      Exception early = null;
      try {
        call(bench, "parseInputs", new Class<?>[] {String[].class}, (Object) args.toArray(new String[0]));
        call(bench, "validateInputs", new Class<?>[0]);
        call(bench, "cleanupBeforeTestrun", new Class<?>[0]);
        long t0 = System.currentTimeMillis();
        createControlFiles(bench.getConf(), baseDir, maps);
        controlMs = System.currentTimeMillis() - t0;
      } catch (Exception e) {
        early = e;
      }
      if (hosts != null) {
        // every run waits here once, a failed one too, so that the hosts stay in step
        hosts.await(operation + " (run " + number + ")");
      }
      if (early != null) {
        throw early;
      }
      long now = System.currentTimeMillis();
      barrier = leastBarrierMs;
      setStartTime(bench, now + barrier);
      submitted = System.currentTimeMillis();
      call(bench, "runTests", new Class<?>[0]);
      exit = (Integer) call(bench, "analyzeResults", new Class<?>[0]);
    } catch (HostBarrier.Broken e) {
      throw e;
    } catch (Exception e) {
      Throwable cause = e instanceof InvocationTargetException && e.getCause() != null ? e.getCause() : e;
      System.err.println("NNBenchRuns: run " + number + " (" + operation + ") failed: " + cause);
      cause.printStackTrace();
      exit = 1;
    }
    System.out.println("fsbench-nnbench run=" + number + " operation=" + operation + " role=" + role + " maps=" + maps
        + " control_ms=" + controlMs + " barrier_ms=" + barrier + " on_time=" + counter.waits.get() + " exit=" + exit);
    System.out.flush();
    long arrival = counter.lastArrival.get();
    return new long[] {exit, arrival > submitted && submitted > 0 ? arrival - submitted : 0};
  }

  /**
   * NNBench's control files (one per map: its name and number in a SequenceFile), as NNBench writes
   * them, but several at a time: one by one, 100 of them take half a minute on a small HDFS, where a
   * file with data waits for its block to be reported before its close returns.
   */
  private static void createControlFiles(Configuration conf, String baseDir, long maps) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool((int) Math.min(maps, CONTROL_WRITERS));
    try {
      List<Future<?>> done = new ArrayList<>();
      for (long i = 0; i < maps; i++) {
        final long number = i;
        done.add(pool.submit(() -> {
          String name = "NNBench_Controlfile_" + number;
          org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(
              new org.apache.hadoop.fs.Path(baseDir, "control"), name);
          try (SequenceFile.Writer writer = SequenceFile.createWriter(conf, SequenceFile.Writer.file(file),
              SequenceFile.Writer.keyClass(Text.class), SequenceFile.Writer.valueClass(LongWritable.class),
              SequenceFile.Writer.compression(SequenceFile.CompressionType.NONE))) {
            writer.append(new Text(name), new LongWritable(number));
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** NNBench keeps the start time in a field and in its configuration; the maps read the latter. */
  private static void setStartTime(NNBench bench, long startMs) throws ReflectiveOperationException {
    Field field = NNBench.class.getDeclaredField("startTime");
    field.setAccessible(true);
    field.setLong(bench, startMs);
    bench.getConf().setLong("test.nnbench.starttime", startMs);
  }

  private static Object call(NNBench bench, String name, Class<?>[] types, Object... args) throws Exception {
    Method method = NNBench.class.getDeclaredMethod(name, types);
    method.setAccessible(true);
    return method.invoke(bench, args);
  }

  private static void removeTree(Path folder) {
    try (Stream<Path> paths = Files.walk(folder)) {
      paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      System.err.println("NNBenchRuns: could not remove " + folder + ": " + e);
    }
  }
}
