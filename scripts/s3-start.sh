#!/usr/bin/env bash
# Start a throw-away single-node Ceph RADOS Gateway on 127.0.0.1 for tests:
# one monitor, one in-memory OSD, radosgw, authentication off inside the cluster.
# Installs Debian's radosgw/ceph-mon/ceph-osd when missing.
#
#   scripts/s3-start.sh [DIR] [PORT]     then: source DIR/s3.env
#   scripts/s3-stop.sh [DIR]
set -euo pipefail
DIR=$(realpath -m "${1:-/tmp/branchgraph-s3}")
RGW_PORT=${2:-7480}
MON_V2=${MON_V2_PORT:-13300}
MON_V1=${MON_V1_PORT:-16789}
OSD_MEM_BYTES=${OSD_MEM_BYTES:-1073741824}
ACCESS_KEY=${S3_ACCESS_KEY:-testaccesskey}
SECRET_KEY=${S3_SECRET_KEY:-testsecretkey}

if ! command -v radosgw >/dev/null || ! command -v ceph-osd >/dev/null || ! command -v ceph-mon >/dev/null || ! command -v curl >/dev/null; then
  echo "installing radosgw, ceph-mon, ceph-osd from Debian" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends radosgw ceph-mon ceph-osd curl >/dev/null
fi
if [ -e "$DIR" ]; then
  echo "$DIR exists: run scripts/s3-stop.sh $DIR first" >&2
  exit 1
fi
mkdir -p "$DIR"/{mon.a,osd.0,run,log,rgw}
trap 'echo "s3-start failed at line $LINENO; last log lines:" >&2; tail -n 15 "$DIR"/log/*.log >&2 || true' ERR
FSID=$(cat /proc/sys/kernel/random/uuid)
CONF="$DIR/ceph.conf"
# Settings that matter here: crc messenger mode (otherwise radosgw loops on an
# auth error), a short paxos interval (start-up in ~2 s instead of ~13 s) and
# tcp_nodelay on the frontend (small GETs in ~3 ms instead of ~46 ms).
cat > "$CONF" <<CONF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
auth supported = none
ms mon client mode = crc
ms client mode = crc
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
keyring = $DIR/keyring
crash dir = $DIR/crash
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
mon data avail warn = 1
mon data avail crit = 0
paxos propose interval = 0.05
[mon.a]
mon data = $DIR/mon.a
[osd.0]
osd data = $DIR/osd.0
osd objectstore = memstore
memstore device bytes = $OSD_MEM_BYTES
osd memory target = 939524096
[client.rgw.a]
rgw data = $DIR/rgw
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw dns name = localhost
rgw enable usage log = false
rgw thread pool size = 64
CONF
C=(-c "$CONF")
monmaptool --create --clobber --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]" "$DIR/monmap" >/dev/null
ceph-mon "${C[@]}" --mkfs -i a --monmap "$DIR/monmap" >/dev/null 2>&1
ceph-mon "${C[@]}" -i a
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
OSD_ID=$(ceph "${C[@]}" osd new "$OSD_UUID")
ceph-osd "${C[@]}" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" >/dev/null 2>&1
ceph-osd "${C[@]}" -i "$OSD_ID" 2>/dev/null
for _ in $(seq 1 120); do
  ceph "${C[@]}" osd dump 2>/dev/null | grep -q "^osd.$OSD_ID up" && break
  sleep 0.5
done
ceph "${C[@]}" osd dump | grep -q "^osd.$OSD_ID up"
radosgw "${C[@]}" -n client.rgw.a
for _ in $(seq 1 240); do
  curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/" && break
  sleep 0.5
done
curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/" || { echo "radosgw did not come up; see $DIR/log" >&2; exit 1; }
radosgw-admin "${C[@]}" user create --uid=test --display-name=test --access-key="$ACCESS_KEY" --secret="$SECRET_KEY" >/dev/null
cat > "$DIR/s3.env" <<ENV
export S3_ENDPOINT=http://127.0.0.1:$RGW_PORT
export S3_ACCESS_KEY=$ACCESS_KEY
export S3_SECRET_KEY=$SECRET_KEY
export S3_REGION=us-east-1
ENV
echo "S3 ready at http://127.0.0.1:$RGW_PORT (source $DIR/s3.env)"
