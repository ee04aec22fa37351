# Shared by the GPU scripts (sourced): `step NAME CMD…` runs CMD with its output in
# $LOGDIR/NAME.{out,err}, appends its exit status and time to $STEPS, shows the output's tail
# (and the errors' when it failed) and returns CMD's status.
step() {
  local name=$1 start end rc
  shift
  start=$(date +%s%N)
  "$@" > "$LOGDIR/$name.out" 2> "$LOGDIR/$name.err"
  rc=$?
  end=$(date +%s%N)
  printf '%-28s rc=%-3d %9d ms   %s\n' "$name" "$rc" $(((end - start) / 1000000)) "$*" |
    tee -a "$STEPS"
  tail -n 4 "$LOGDIR/$name.out"
  if [ "$rc" -ne 0 ]; then tail -n 8 "$LOGDIR/$name.err"; fi
  return "$rc"
}
