"""Produce and consume over SASL_SSL OAUTHBEARER with librdkafka
(confluent-kafka-python), the token from librdkafka's oauth_cb.

usage: /usr/bin/python3 oauth_roundtrip.py BROKER CA_FILE TOKEN EXPIRY_UNIX TOPIC COUNT
Prints one JSON line: {"ok": true, "consumed": N} or {"ok": false, "error": ...}.
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer

broker, ca, token, expiry, topic, count = sys.argv[1:7]
count = int(count)
errors = []


def on_error(err):
    errors.append(str(err))


conf = {
    "bootstrap.servers": broker,
    "security.protocol": "SASL_SSL",
    "ssl.ca.location": ca,
    "sasl.mechanisms": "OAUTHBEARER",
    "oauth_cb": lambda _config: (token, float(expiry)),
    "error_cb": on_error,
}


def main():
    p = Producer(dict(conf, **{"message.timeout.ms": 20000}))
    delivered = []
    for i in range(count):
        p.produce(topic, key=f"k{i}", value=f"v{i}",
                  on_delivery=lambda err, msg: delivered.append(err))
        p.poll(0)
    # Stop at the first authentication error rather than wait for the
    # messages to time out.
    deadline = time.time() + 30
    while len(delivered) < count and time.time() < deadline:
        p.poll(0.1)
        if any("Authentication" in e or "SASL" in e for e in errors):
            raise RuntimeError(f"client errors {errors[:3]}")
    left = p.flush(1)
    if left or any(delivered):
        raise RuntimeError(f"{left} undelivered, errors {[str(e) for e in delivered if e][:3]}, client errors {errors[:3]}")
    c = Consumer(dict(conf, **{"group.id": "g-" + topic, "auto.offset.reset": "earliest"}))
    c.subscribe([topic])
    consumed, deadline = 0, time.time() + 30
    while consumed < count and time.time() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        if m.value().decode() == f"v{consumed}":
            consumed += 1
    c.close()
    return consumed


try:
    n = main()
    print(json.dumps({"ok": n == count, "consumed": n}))
    sys.exit(0 if n == count else 1)
except Exception as e:  # the test reads the reason
    print(json.dumps({"ok": False, "error": str(e), "client_errors": errors[:5]}))
    sys.exit(1)
