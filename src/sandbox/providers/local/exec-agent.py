# The resident exec agent of a local sandbox, in Python 3 (stdlib only: what the host's /usr, and
# most images, have). It runs as the sandbox's pid 1 (bwrap --as-pid-1), inside the sandbox's
# namespaces, cgroup and seccomp filter, as the sandbox user with no capabilities; a command cannot
# kill it (the kernel drops SIGKILL sent to a pid namespace's init from inside it).
#
# Wire (stdin from the host, stdout to it): frames of `>IcI` (payload length, type, request id) and
# the payload. Host -> agent: X exec (JSON: argv, env, cwd, timeout_ms, max_bytes, stdin, pty; then
# the raw bytes of a long command, given to the shell on fd 4), I stdin bytes, E end of stdin, K kill
# (payload: the reason), S signal to the command's process group (payload: its number, in ASCII),
# W window size of a pty exec (payload: `>HH` rows, cols). Agent -> host: P started (payload: the
# pid, in ASCII; pty execs only, before any output), O / R stdout / stderr bytes (within the cap),
# D done (JSON: code, signal, killed, truncated), F could not start (JSON: error), H hello once ready.
#
# A pty exec (`pty: {rows, cols}`, `sandbox serve`'s PTY sessions) runs on a pseudo-terminal the
# agent makes: the command is a session leader with the pty as its controlling terminal and as its
# stdin, stdout and stderr; its output comes as O frames, I frames are typed on it, W sets its size
# (the kernel then sends SIGWINCH to its foreground process group), and a cwd that is not a
# directory means /, as Orchard's agent does. S and W start no process.
#
# Each command runs in its own session (setsid). When it ends, or its timeout or a kill comes, its
# process group is SIGKILLed, and when no other command runs, everything else in the sandbox too
# (kill(-1) spares only pid 1): what a pid namespace per exec gave, so background and setsid
# children do not outlive their command or hold its pipes.
#
# The host (exec-agent.ts) reads this file once and feeds it to python3 inside the sandbox on fd 4.
import errno, json, os, selectors, signal, struct, sys, time

HEAD = struct.Struct('>IcI')
SIGNALS = [sig for sig in getattr(signal, 'valid_signals', lambda: range(1, 65))() if sig not in (signal.SIGKILL, signal.SIGSTOP)]
PID1 = os.getpid() == 1
CHUNK = 65536
GRACE = 2.0
sel = selectors.DefaultSelector()
execs = {}
by_pid = {}
inbuf = bytearray()

def send(kind, rid, payload=b''):
    data = HEAD.pack(len(payload), kind, rid) + payload
    view = memoryview(data)
    while view:
        try:
            n = os.write(1, view)
        except InterruptedError:
            continue
        view = view[n:]

def send_json(kind, rid, obj):
    send(kind, rid, json.dumps(obj).encode())

def nonblock(fd):
    os.set_blocking(fd, False)

def sweep(rec):
    try:
        os.killpg(rec['pid'], signal.SIGKILL)
    except OSError:
        pass
    if PID1 and all(other is rec or other['status'] is not None for other in execs.values()):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass

def find_program(name, env):
    # execvp's search, in the command's PATH (the agent itself has no environment).
    if b'/' in name:
        return name
    for folder in env.get(b'PATH', b'/usr/bin:/bin').split(b':'):
        path = os.path.join(folder or b'.', name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    raise FileNotFoundError(errno.ENOENT, 'command not found: ' + name.decode('utf-8', 'replace'))

def window(fd, rows, cols):
    import fcntl, termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))

def start(rid, payload):
    hlen = struct.unpack('>I', payload[:4])[0]
    req = json.loads(payload[4:4 + hlen])
    script = payload[4 + hlen:]
    enc = lambda s: s.encode('utf-8', 'replace')
    argv = [enc(a) for a in req['argv']]
    env = {enc(k): enc(v) for k, v in req['env'].items()}
    pty = req.get('pty')
    # Every descriptor of the agent is close-on-exec (os.pipe, os.openpty, memfd_create, and main()
    # for the inherited ones): the command gets only what the file actions give it.
    out_r = out_w = err_r = err_w = in_r = in_w = None
    if pty:
        out_r, out_w = os.openpty()
        try:
            window(out_r, int(pty['rows']), int(pty['cols']))
            name = os.ttyname(out_w)
            # Typed bytes go to the master through a second descriptor, so that the end of stdin closes only that one.
            in_w = os.dup(out_r)
        except BaseException:
            os.close(out_r)
            os.close(out_w)
            raise
        # Opened afresh in the child, after setsid and without O_NOCTTY: it becomes the controlling terminal.
        actions = [(os.POSIX_SPAWN_OPEN, 0, name, os.O_RDWR, 0), (os.POSIX_SPAWN_DUP2, 0, 1), (os.POSIX_SPAWN_DUP2, 0, 2)]
    else:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if req.get('stdin'):
            in_r, in_w = os.pipe()
        actions = [(os.POSIX_SPAWN_DUP2, in_r, 0)] if in_r is not None else [(os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0)]
        actions += [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    memfd = None
    if script:
        memfd = os.memfd_create('command')
        os.write(memfd, script)
        os.lseek(memfd, 0, os.SEEK_SET)
        actions.append((os.POSIX_SPAWN_DUP2, memfd, 4))
    try:
        # posix_spawn (vfork and exec, no copy of the agent) has no chdir: the agent is single-threaded,
        # so it changes its own directory around the spawn.
        try:
            os.chdir(req['cwd'])
        except OSError:
            if not pty:
                raise
            os.chdir('/')
        try:
            pid = os.posix_spawn(find_program(argv[0], env), argv, env, file_actions=actions, setsid=True, setsigmask=(), setsigdef=SIGNALS)
        finally:
            os.chdir('/')
    except BaseException:
        for fd in (out_r, err_r, in_w):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, in_r, memfd):
            if fd is not None:
                os.close(fd)
    rec = {'rid': rid, 'pid': pid, 'status': None, 'killed': None, 'sent': [0, 0],
           'max': int(req['max_bytes']), 'truncated': [False, False], 'grace': None,
           'deadline': time.monotonic() + req['timeout_ms'] / 1000.0,
           'in_w': in_w, 'in_buf': bytearray(), 'in_eof': False, 'fds': {}, 'pty': out_r if pty else None}
    execs[rid] = rec
    by_pid[pid] = rec
    if pty:
        send(b'P', rid, str(pid).encode())
    for fd, stream in ((out_r, 0), (err_r, 1)):
        if fd is None:
            continue
        nonblock(fd)
        rec['fds'][fd] = stream
        sel.register(fd, selectors.EVENT_READ, ('out', rec, stream))
    if in_w is not None:
        nonblock(in_w)

def close_stdin(rec):
    fd = rec['in_w']
    if fd is None:
        return
    try:
        sel.unregister(fd)
    except (KeyError, ValueError):
        pass
    os.close(fd)
    rec['in_w'] = None

def feed(rec):
    fd = rec['in_w']
    if fd is None:
        return
    while rec['in_buf']:
        try:
            n = os.write(fd, rec['in_buf'])
        except BlockingIOError:
            break
        except InterruptedError:
            continue
        except OSError:
            rec['in_buf'].clear()
            close_stdin(rec)
            return
        del rec['in_buf'][:n]
    if rec['in_buf']:
        try:
            sel.register(fd, selectors.EVENT_WRITE, ('in', rec, None))
        except KeyError:
            pass
        return
    try:
        sel.unregister(fd)
    except (KeyError, ValueError):
        pass
    if rec['in_eof']:
        close_stdin(rec)

def kill(rec, reason):
    if rec['status'] is not None:
        # Ended and swept when reaped (its group id may be free again): stop waiting for stragglers' output.
        rec['grace'] = time.monotonic()
        return
    if rec['killed'] is None:
        rec['killed'] = reason
    sweep(rec)
    if rec['grace'] is None:
        rec['grace'] = time.monotonic() + GRACE

def finish(rec):
    for fd in list(rec['fds']):
        sel.unregister(fd)
        os.close(fd)
    rec['fds'].clear()
    close_stdin(rec)
    execs.pop(rec['rid'], None)
    status = rec['status']
    code = sig = None
    if status is not None and rec['killed'] is None:
        # A signal's death as the shell reports it (128 + N), and which signal, which only the wait status tells.
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        code = 128 + sig if sig else os.WEXITSTATUS(status)
    send_json(b'D', rec['rid'], {'code': code, 'signal': sig, 'killed': rec['killed'], 'truncated': rec['truncated']})

def maybe_finish(rec):
    if rec['status'] is not None and not rec['fds']:
        finish(rec)

def read_out(fd, rec, stream):
    try:
        data = os.read(fd, CHUNK)
    except BlockingIOError:
        return
    except InterruptedError:
        return
    except OSError as error:
        # A pty's master reads EIO once no process holds the terminal any more: its end of output.
        if error.errno != errno.EIO or rec['pty'] is None:
            raise
        data = b''
    if not data:
        sel.unregister(fd)
        os.close(fd)
        del rec['fds'][fd]
        maybe_finish(rec)
        return
    room = rec['max'] - rec['sent'][stream]
    if len(data) > room:
        rec['truncated'][stream] = True
        data = data[:max(room, 0)]
    if data:
        rec['sent'][stream] += len(data)
        send(b'O' if stream == 0 else b'R', rec['rid'], data)

def reap():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return
        rec = by_pid.pop(pid, None)
        if rec is None:
            continue
        rec['status'] = status
        sweep(rec)
        if rec['grace'] is None:
            rec['grace'] = time.monotonic() + GRACE
        maybe_finish(rec)

def on_frame(kind, rid, payload):
    if kind == b'X':
        try:
            start(rid, payload)
        except Exception as error:
            send_json(b'F', rid, {'error': str(error)})
        return
    rec = execs.get(rid)
    if rec is None:
        return
    if kind == b'I':
        rec['in_buf'] += payload
        feed(rec)
    elif kind == b'E':
        rec['in_eof'] = True
        feed(rec)
    elif kind == b'K':
        kill(rec, payload.decode() or 'abort')
    elif kind == b'S':
        signal_group(rec, payload)
    elif kind == b'W':
        if rec['pty'] is not None and rec['status'] is None and len(payload) == 4:
            rows, cols = struct.unpack('>HH', payload)
            try:
                window(rec['pty'], rows, cols)
            except OSError:
                pass

def signal_group(rec, payload):
    # To the command's process group (it leads its own session), or the command alone when the group is gone.
    try:
        sig = int(payload)
    except ValueError:
        return
    if rec['status'] is not None or not 0 < sig < 65:
        return
    try:
        os.killpg(rec['pid'], sig)
    except OSError:
        try:
            os.kill(rec['pid'], sig)
        except OSError:
            pass

def read_host():
    try:
        data = os.read(0, 1 << 20)
    except (BlockingIOError, InterruptedError):
        return
    if not data:
        if PID1:
            os.kill(-1, signal.SIGKILL)
        os._exit(0)
    inbuf.extend(data)
    while len(inbuf) >= HEAD.size:
        length, kind, rid = HEAD.unpack_from(inbuf)
        if len(inbuf) < HEAD.size + length:
            break
        payload = bytes(inbuf[HEAD.size:HEAD.size + length])
        del inbuf[:HEAD.size + length]
        on_frame(kind, rid, payload)

def main():
    # kill(-1) below means "every process of this sandbox" only in the sandbox's own pid namespace,
    # as its pid 1: anywhere else it would kill every process the user owns. Refuse to run there.
    if os.getpid() != 1:
        sys.stderr.write('winnower-exec-agent: must run as pid 1 of a sandbox pid namespace (bwrap --as-pid-1); refusing\n')
        sys.exit(2)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_IGN)
    # What bwrap and the bootstrap left open must not reach commands (posix_spawn keeps inheritable fds).
    for name in os.listdir('/proc/self/fd'):
        if int(name) > 2:
            try:
                os.set_inheritable(int(name), False)
            except OSError:
                pass
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    nonblock(0)
    sel.register(0, selectors.EVENT_READ, ('host', None, None))
    sel.register(wake_r, selectors.EVENT_READ, ('wake', None, None))
    send(b'H', 0, str(os.getpid()).encode())
    while True:
        now = time.monotonic()
        timeout = None
        for rec in list(execs.values()):
            if rec['status'] is None and rec['killed'] is None and now >= rec['deadline']:
                kill(rec, 'timeout')
            if rec['grace'] is not None and now >= rec['grace'] and rec['status'] is not None:
                finish(rec)
                continue
            if rec['grace'] is not None and now >= rec['grace']:
                sweep(rec)
                rec['grace'] = now + GRACE
            for when in (rec['deadline'] if rec['killed'] is None and rec['status'] is None else None, rec['grace']):
                if when is not None:
                    wait = max(0.0, when - now)
                    timeout = wait if timeout is None else min(timeout, wait)
        for key, _ in sel.select(timeout):
            what, rec, stream = key.data
            if what == 'host':
                read_host()
            elif what == 'wake':
                try:
                    while os.read(wake_r, 4096):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
                reap()
            elif what == 'out':
                if key.fd in rec['fds']:
                    read_out(key.fd, rec, stream)
            elif what == 'in':
                feed(rec)
        reap()

main()
