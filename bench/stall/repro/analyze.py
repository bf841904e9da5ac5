#!/usr/bin/env python3
"""analyze.py trace-<pid>.txt READER_TID E_PID [min_ms]

For every lock contention of the reader longer than min_ms (default 5), print
the lock (hashed address), how long it waited, the reader's blocking stack,
and what the exec'ing task E was doing meanwhile (its switch-out stacks and
who took its CPU)."""
import re
import sys

path, rtid, epid = sys.argv[1], sys.argv[2], sys.argv[3]
min_ms = float(sys.argv[4]) if len(sys.argv) > 4 else 5.0

ev_re = re.compile(r'^\s*(\S+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(<stack trace>|[^\s:]+:)\s*(.*)$')
events = []  # (ts, pid, cpu, name, body, stack)
with open(path) as f:
    for line in f:
        if line.startswith('#'):
            continue
        if line.startswith(' => '):
            if events and events[-1][3] == '<stack':
                events[-1][5].append(line[4:].strip())
            continue
        m = ev_re.match(line)
        if not m:
            continue
        comm, pid, cpu, ts, name, body = m.groups()
        name = name.rstrip(':')
        events.append([float(ts), pid, cpu, '<stack' if name.startswith('<stack') else name, body, []])

# attach stacks to the preceding sched_switch of the same pid
for i, e in enumerate(events):
    if e[3] == '<stack' and i > 0:
        for j in range(i - 1, max(0, i - 4), -1):
            if events[j][1] == e[1] and events[j][3] == 'sched_switch':
                events[j][5] = e[5]
                break

begin = {}
n = 0
for i, e in enumerate(events):
    ts, pid, cpu, name, body, stack = e
    if pid != rtid:
        continue
    if name == 'contention_begin':
        begin = {'i': i, 'ts': ts, 'lock': body}
    elif name == 'contention_end' and begin:
        dur = (ts - begin['ts']) * 1000
        if dur >= min_ms:
            n += 1
            print(f"=== reader {rtid} waited {dur:.1f} ms on {begin['lock']} "
                  f"[{begin['ts']:.6f} .. {ts:.6f}]")
            for e2 in events[begin['i']:i]:
                if e2[1] == rtid and e2[3] == 'sched_switch' and e2[5]:
                    st = [s for s in e2[5] if not s.startswith(('trace_event', '__traceiter'))]
                    print("  reader blocked in: " + " <- ".join(st[:9]))
                    break
            # E before/during the wait
            last_e = None
            for e2 in events[:i]:
                if e2[1] == epid and e2[3] in ('sched_switch', 'sched_prepare_exec', 'sched_process_exec'):
                    if e2[0] < begin['ts']:
                        last_e = e2
            if last_e:
                print(f"  last E event before wait: {last_e[0]:.6f} {last_e[3]} {last_e[4][:120]}")
                if last_e[5]:
                    st = [s for s in last_e[5] if not s.startswith(('trace_event', '__traceiter'))]
                    print("    E stack: " + " <- ".join(st[:12]))
            for e2 in events[begin['i']:i + 1]:
                if e2[3] == 'sched_switch' and (e2[1] == epid or f'next_pid={epid} ' in e2[4]):
                    body = re.sub(r'prev_comm=\S+ ', '', e2[4])
                    print(f"  during: {e2[0]:.6f} cpu{e2[2]} {body[:150]}")
                    if e2[1] == epid and e2[5]:
                        st = [s for s in e2[5] if not s.startswith(('trace_event', '__traceiter'))]
                        print("    E stack: " + " <- ".join(st[:12]))
                elif e2[1] == epid and e2[3] in ('sched_prepare_exec', 'sched_process_exec'):
                    print(f"  during: {e2[0]:.6f} {e2[3]}")
        begin = {}
print(f"{n} reader waits >= {min_ms} ms")
