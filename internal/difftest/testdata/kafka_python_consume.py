"""Reads partition 0 of a topic with a real kafka-python 2.0 consumer from
an offset and prints every delivered record's offset, one per line; then
exits a short while after it delivered the offset LAST (the one the test
expects last; -1 for none), else once nothing came for IDLE_MS. With
CHECK_ISOLATION it only tries to configure isolation_level and prints the
error. Used by clients_test.go:
python3 kafka_python_consume.py BROKER TOPIC FROM MAXBYTES IDLE_MS LAST
"""
import sys
import time

from kafka import KafkaConsumer, TopicPartition

if sys.argv[1] == "CHECK_ISOLATION":
    try:
        KafkaConsumer(bootstrap_servers=sys.argv[2], isolation_level="read_committed")
    except Exception as e:  # what a user gets: the config is not known
        print(type(e).__name__ + ": " + str(e))
    sys.exit(0)

broker, topic, start, max_bytes, idle_ms, last = sys.argv[1:7]
last = int(last)
consumer = KafkaConsumer(bootstrap_servers=broker, enable_auto_commit=False, group_id=None,
                         max_partition_fetch_bytes=int(max_bytes), fetch_max_wait_ms=50,
                         api_version=(2, 5, 0))
tp = TopicPartition(topic, 0)
consumer.assign([tp])
consumer.seek(tp, int(start))
out = []
deadline = time.monotonic() + int(idle_ms) / 1000
while time.monotonic() < deadline:
    polled = consumer.poll(timeout_ms=100)
    for records in polled.values():
        for r in records:
            out.append(r.offset)
            wait = 0.3 if r.offset >= last >= 0 else int(idle_ms) / 1000
            deadline = time.monotonic() + wait
consumer.close()
sys.stdout.write("".join("%d\n" % o for o in out))
