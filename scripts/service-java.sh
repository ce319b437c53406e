# Sourced by scripts/load-test.sh and scripts/side-by-side.sh (after the jar is built): the JVM and flags the harness
# starts Podsweeper with, as the image runs it (docs/benchmarks.md):
#   SERVICE_JAVA       the java command (default: Temurin 25's, as the image's runtime)
#   SERVICE_JAVA_OPTS  its flags (default: the Deployment's JAVA_TOOL_OPTIONS and -XX:MaxRAM of its memory limit, i.e.
#                      what the container would get)
#   SERVICE_AOT        1 (default): add -XX:AOTCache with a cache trained for these flags and this jar
#                      (scripts/aot-cache.sh, kept in target/aot/ by a hash of both); 0: none
SERVICE_JAVA=${SERVICE_JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
if [ -z "${SERVICE_JAVA_OPTS+x}" ]; then
  opts=$(sed -n '/name: JAVA_TOOL_OPTIONS/,/value:/s/^ *value: "\(.*\)"$/\1/p' manifests/deployment.yaml)
  limit=$(sed -n '/limits:/,/memory:/{s/^ *memory: \([0-9]*\)Mi$/\1/p}' manifests/deployment.yaml)
  SERVICE_JAVA_OPTS="$opts -XX:MaxRAM=${limit}m"
fi
if [ "${SERVICE_AOT:-1}" = 1 ] && [[ "$SERVICE_JAVA_OPTS" != *-XX:AOTCache=* ]]; then
  aot_cache=target/aot/$( (echo "$SERVICE_JAVA $SERVICE_JAVA_OPTS"; sha256sum < target/podsweeper.jar) | sha256sum | cut -c1-12).aot
  if [ ! -s "$aot_cache" ]; then
    # shellcheck disable=SC2086 # the flags, one word each
    AOT_JAVA="$SERVICE_JAVA" bash scripts/aot-cache.sh "$aot_cache" $SERVICE_JAVA_OPTS >&2
  fi
  SERVICE_JAVA_OPTS="-XX:AOTCache=$aot_cache $SERVICE_JAVA_OPTS"
fi
export SERVICE_JAVA SERVICE_JAVA_OPTS
