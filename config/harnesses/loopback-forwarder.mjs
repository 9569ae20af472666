#!/usr/bin/env node
// Runs inside a sandbox that has no network: listens on 127.0.0.1:<port> in the sandbox's own
// network namespace, pipes every connection to the recording proxy's unix socket (bind-mounted
// from the host), then starts the harness and exits with its status. Starting the harness only
// once the port listens means its first model call cannot race the forwarder.
// Usage: node loopback-forwarder.mjs <socket> <port> -- <program> [args...]
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

const [socketPath, portText, separator, program, ...args] = process.argv.slice(2);
if (!socketPath || !portText || separator !== '--' || !program) {
  process.stderr.write('usage: loopback-forwarder.mjs <socket> <port> -- <program> [args...]\n');
  process.exit(64);
}

const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream).pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', end);
  upstream.on('error', end);
});
server.on('error', (error) => {
  process.stderr.write(`loopback-forwarder: ${error.message}\n`);
  process.exit(70);
});
server.listen(Number(portText), '127.0.0.1', () => {
  const child = spawn(program, args, { stdio: 'inherit' });
  child.on('error', (error) => {
    process.stderr.write(`loopback-forwarder: cannot start ${program}: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + 15 : 1)));
  for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(name, () => child.kill(name));
});
