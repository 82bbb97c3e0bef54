#!/bin/sh
# Put the Hadoop jars of pom.xml (fetched once by Maven from Maven Central) and fsbench's NNBench
# runner (java/, compiled here) into the jar cache DEST, used by the `hdfs` service kind, the hdfs,
# s3a and jfs target kinds and the nnbench tool. Idempotent: each part is redone only when its
# sources changed (their sha256 is kept beside it). Needs java, javac (a JDK) and mvn.
#   sh fsbench/hadoop/install-jars.sh [DEST]     (default: /usr/local/share/fsbench/hadoop)
# Layout: DEST/lib/*.jar, DEST/fsbench-hadoop.jar, DEST/jvm.args, DEST/web/webapps/{hdfs,datanode,secondary,static},
# DEST/web/core-site.xml (empty)
set -eu
dest=${1:-/usr/local/share/fsbench/hadoop}
here=$(cd "$(dirname "$0")" && pwd)
for tool in java javac jar mvn; do
  command -v "$tool" >/dev/null 2>&1 || { echo "install-jars.sh: $tool is missing (a JDK and Maven are needed)" >&2; exit 3; }
done
mkdir -p "$dest"
pom_sum=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
if [ "$(cat "$dest/lib.sha256" 2>/dev/null || true)" != "$pom_sum" ]; then
  repo=$(mktemp -d)   # Maven's own repository: thrown away, the jars are kept in DEST/lib only
  rm -rf "$dest/lib.new"
  echo "install-jars.sh: fetching the Hadoop jars of $here/pom.xml from Maven Central" >&2
  if ! mvn -q -B -f "$here/pom.xml" -Dmaven.repo.local="$repo" dependency:copy-dependencies \
         -DoutputDirectory="$dest/lib.new" >"$repo.log" 2>&1; then
    tail -20 "$repo.log" >&2; rm -rf "$repo" "$repo.log" "$dest/lib.new"; exit 1
  fi
  rm -rf "$repo" "$repo.log" "$dest/lib.old"
  [ ! -d "$dest/lib" ] || mv "$dest/lib" "$dest/lib.old"
  mv "$dest/lib.new" "$dest/lib" && rm -rf "$dest/lib.old"
  echo "$pom_sum" > "$dest/lib.sha256"
  rm -f "$dest/runner.sha256"   # compiled against the old jars
fi
# the hadoop-hdfs jar on Maven Central has no webapps/ resources, and the NameNode's and DataNode's
# HTTP servers refuse to start without webapps/NAME on the classpath: empty folders are enough
for app in hdfs datanode secondary static; do mkdir -p "$dest/web/webapps/$app"; done
# the JVM options Hadoop needs on Java 17 (`java @DEST/jvm.args ...`)
cp "$here/jvm.args" "$dest/jvm.args"
# FsShell insists on a core-site.xml on the classpath; an empty one comes last, after the caller's
printf '<?xml version="1.0"?>\n<configuration>\n</configuration>\n' > "$dest/web/core-site.xml"
java_sum=$(cat "$here"/java/fsbench/*.java "$dest/lib.sha256" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$dest/runner.sha256" 2>/dev/null || true)" != "$java_sum" ]; then
  classes=$(mktemp -d)
  javac -nowarn -Xlint:-path -cp "$dest/lib/*" -d "$classes" "$here"/java/fsbench/*.java
  jar cf "$dest/fsbench-hadoop.jar.new" -C "$classes" . && mv "$dest/fsbench-hadoop.jar.new" "$dest/fsbench-hadoop.jar"
  rm -rf "$classes"
  echo "$java_sum" > "$dest/runner.sha256"
fi
echo "install-jars.sh: $(ls "$dest/lib" | wc -l) jars and fsbench-hadoop.jar in $dest" >&2
