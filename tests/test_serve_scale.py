#!/usr/bin/env python3
"""test_serve_scale.py - three `shapegate serve` replicas behind a real nginx on loopback, sharing
answers through a real redis-server.

Starts 3 replicas on free ports and nginx (Debian's, its own config, pid and logs in the work
folder) balancing them; sends checks, archive verifications and packs through nginx from
concurrent clients and compares every answer with a replica's own; checks that every replica took
a share; checks that an answer one replica stored in Redis another serves byte for byte, and that
the replicas answer with Redis stopped; stops one replica and checks that nginx keeps answering from the others; then stops
everything (SIGTERM to the replicas, SIGQUIT to nginx) and checks that nothing is left running.
The replicas are stateless: any one answers any request the same way.

    test_serve_scale.py --shapegate BIN --traces SERVE_TRACES --source SRC --work DIR

Exit 77 (ctest: skipped) when nginx is not installed. Ends with "N passed, N failed".
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serve as common  # noqa: E402 - the counters and ok() of the single-server test

ok = common.ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, ctype=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers={"Content-Type": ctype} if ctype else {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def wait_port(port, proc, what):
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %d" % (what, proc.returncode))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("%s did not listen on %d" % (what, port))


def metric(port, name):
    st, text = request(port, "GET", "/metrics")
    for line in text.decode().splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    return -1


# As root, nginx's workers would drop to an unprivileged user who may not reach the work folder
# (a clone under `mktemp -d` is mode 700): they keep the test's own user.
NGINX_CONF = """
{user_line}
worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
daemon off;
events {{ worker_connections 512; }}
http {{
    access_log {work}/nginx-access.log;
    client_body_temp_path {work}/nginx-body;
    proxy_temp_path {work}/nginx-proxy;
    fastcgi_temp_path {work}/nginx-fastcgi;
    uwsgi_temp_path {work}/nginx-uwsgi;
    scgi_temp_path {work}/nginx-scgi;
    client_max_body_size 64m;
    upstream shapegate {{
{servers}
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://shapegate;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream error timeout;
            proxy_read_timeout 120s;
        }}
    }}
}}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapegate", required=True)
    ap.add_argument("--traces", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    redis = shutil.which("redis-server")
    if not nginx or not redis:
        print("nginx or redis-server not installed (apt-get install nginx redis-server): skipped")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    tdir = os.path.join(args.work, "traces")
    os.makedirs(tdir)
    cases = os.path.join(args.source, "tests", "corpus", "cases")
    dirs = [os.path.join(cases, d) for d in sorted(os.listdir(cases)) if os.path.isdir(os.path.join(cases, d))][:10]
    subprocess.run([args.traces, tdir] + dirs, check=True)
    bodies = {f: open(os.path.join(tdir, f), "rb").read() for f in sorted(os.listdir(tdir))}
    pt2 = [os.path.join(d, "model.pt2") for d in sorted(os.path.join(cases, x) for x in os.listdir(cases))
           if os.path.exists(os.path.join(d, "model.pt2"))][:2]

    replicas = []
    ng = None
    rport = free_port()
    rd = subprocess.Popen([redis, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                           "--dir", args.work], stdout=open(os.path.join(args.work, "redis.log"), "wb"),
                          stderr=subprocess.STDOUT)
    try:
        wait_port(rport, rd, "redis-server")
        for i in range(3):
            pf = os.path.join(args.work, "r%d.port" % i)
            log = open(os.path.join(args.work, "r%d.log" % i), "wb")
            p = subprocess.Popen([args.shapegate, "serve", "--listen", "127.0.0.1:0", "--port-file", pf,
                                  "--threads", "1", "--redis", "redis://127.0.0.1:%d" % rport],
                                 stdout=subprocess.DEVNULL, stderr=log)
            deadline = time.time() + 30
            while not os.path.exists(pf) and time.time() < deadline and p.poll() is None:
                time.sleep(0.02)
            replicas.append((p, int(open(pf).read()), log))
        port = free_port()
        conf = os.path.join(args.work, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(user_line="user root;" if os.geteuid() == 0 else "", work=args.work, port=port, servers="\n".join(
                "        server 127.0.0.1:%d max_fails=1 fail_timeout=30s;" % r[1] for r in replicas)))
        ng = subprocess.Popen([nginx, "-p", args.work, "-c", conf], stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(args.work, "nginx.stderr"), "wb"))
        wait_port(port, ng, "nginx")

        # what a replica answers directly
        expect = {}
        for name, body in bodies.items():
            st, got = request(replicas[0][1], "POST", "/v1/check", body, "application/json")
            expect[name] = (st, json.loads(got)["verdict"])
        st, v = request(replicas[0][1], "POST", "/v1/archives/verify", open(pt2[0], "rb").read(), "application/zip")
        expect_verify = (st, json.loads(v)["verdict"])
        errors = []

        def client(k):
            names = sorted(bodies)
            for i in range(20):
                name = names[(k * 3 + i) % len(names)]
                try:
                    st, got = request(port, "POST", "/v1/check", bodies[name], "application/json")
                    if (st, json.loads(got).get("verdict")) != expect[name]:
                        errors.append((name, st, got[:100]))
                    if i % 10 == 0:
                        st, got = request(port, "POST", "/v1/archives/verify", open(pt2[0], "rb").read(),
                                          "application/zip")
                        if (st, json.loads(got).get("verdict")) != expect_verify:
                            errors.append(("verify", st, got[:100]))
                except Exception as e:  # noqa: BLE001 - any failure is a test failure
                    errors.append(repr(e))

        ts = [threading.Thread(target=client, args=(k,)) for k in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        ok(not errors, "6 clients x 20 checks through nginx agree with a replica's answers: %r" % errors[:3])
        st, got = request(port, "POST", "/v1/archives/pack", open(pt2[1], "rb").read(), "application/octet-stream")
        ok(st == 200 and got[:2] == b"PK", "pack through nginx: %d" % st)
        st, got = request(port, "GET", "/nope")
        ok(st == 404 and json.loads(got)["error"]["code"] == "not_found", "404 through nginx")
        for i, (p, rport, log) in enumerate(replicas):
            log.flush()
            with open(os.path.join(args.work, "r%d.log" % i)) as f:
                n = sum(1 for l in f if '"path": "/v1/check"' in l)
            ok(n >= 10, "replica %d answered %d checks (every replica takes a share)" % (i, n))
        # the shared cache: what replica 1 solved, replica 2 answers from Redis, byte for byte
        fresh = json.loads(bodies[sorted(bodies)[0]])
        fresh["torch_version"] = fresh.get("torch_version", "") + "+scale-test"  # a trace no replica saw
        fresh = json.dumps(fresh).encode()
        st1, a1 = request(replicas[1][1], "POST", "/v1/check", fresh, "application/json")
        before = metric(replicas[2][1], "shapegate_redis_hits_total")
        st2, a2 = request(replicas[2][1], "POST", "/v1/check", fresh, "application/json")
        ok(st1 == st2 == 200 and a1 == a2, "the same answer from two replicas")
        ok(metric(replicas[2][1], "shapegate_redis_hits_total") == before + 1, "replica 2 answered from Redis")
        ok(sum(metric(r[1], "shapegate_redis_hits_total") for r in replicas) > 0, "Redis hits across replicas")
        # Redis goes: the replicas answer without it
        rd.send_signal(signal.SIGTERM)
        ok(rd.wait(30) == 0, "redis-server stopped")
        fresh2 = fresh.replace(b"+scale-test", b"+scale-test-2")
        st, got = request(port, "POST", "/v1/check", fresh2, "application/json")
        ok(st == 200 and json.loads(got)["verdict"] == json.loads(a1)["verdict"], "answered with Redis down: %d" % st)
        ok(any(metric(r[1], "shapegate_redis_up") == 0 for r in replicas), "a replica saw Redis down")
        # one replica goes: nginx answers from the others
        p0 = replicas[0][0]
        p0.send_signal(signal.SIGTERM)
        ok(p0.wait(30) == 0, "replica 0 exit 0 after SIGTERM")
        bad = 0
        for i in range(30):
            st, got = request(port, "POST", "/v1/check", bodies[sorted(bodies)[i % len(bodies)]], "application/json")
            bad += st != 200
        ok(bad == 0, "with one replica down, %d of 30 requests failed" % bad)
    finally:
        for p, _, log in replicas:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for i, (p, _, log) in enumerate(replicas):
            try:
                rc = p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            ok(rc == 0, "replica %d exit %r" % (i, rc))
            log.close()
        if ng:
            ng.send_signal(signal.SIGQUIT)
            try:
                ng.wait(30)
            except subprocess.TimeoutExpired:
                ng.kill()
                ng.wait()
            time.sleep(0.2)
            left = subprocess.run(["pgrep", "-f", "nginx -p " + args.work], capture_output=True).stdout.split()
            ok(not left, "nginx and its workers stopped: %r" % left)
        if rd.poll() is None:
            rd.send_signal(signal.SIGTERM)
            rd.wait(30)
    print("%d passed, %d failed" % (common.PASSED, common.FAILED))
    return 1 if common.FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
