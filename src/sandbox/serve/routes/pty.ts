/**
 * `GET /sandboxes/:id/exec/pty`: the PTY WebSocket (pty-session.ts). Open to the onRequest auth,
 * it checks the key itself after the handshake, so that every client sees the close code.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Sandbox } from '../../types.js';
import { ptyKeyAccepted } from '../auth.js';
import { PtySession, parseInit, type PtyServerFrame } from '../pty-session.js';
import type { SandboxEntry } from '../sandbox-table.js';
import type { RouteContext } from './common.js';

/**
 * The WebSocket server's options (plugin.ts registers it). A client offering `Sec-WebSocket-Protocol: api_key.<key>` gets that protocol back (a
 * browser refuses a handshake that answers none).
 */
export const PTY_WEBSOCKET_OPTIONS = {
  maxPayload: 4 * 1024 * 1024,
  handleProtocols: (protocols: Set<string>) => [...protocols].find((protocol) => protocol.startsWith('api_key.')) ?? false,
};

export const ptyRoutes: FastifyPluginAsync<RouteContext> = async (app, { table, key }) => {
  app.get<{ Params: { id: string } }>('/sandboxes/:id/exec/pty', { websocket: true, config: { orchardOpen: true } }, (socket, request) => {
    // Orchard closes with these codes before accepting; we accept first so that every client sees the code.
    if (key && !ptyKeyAccepted(request, key)) return socket.close(4401, 'Unauthorized');
    const entry = table.get(request.params.id);
    if (!entry) return socket.close(4404, `Sandbox ${request.params.id} not found`);
    if (entry.view.status !== 'ready' || !entry.sandbox || entry.deleted)
      return socket.close(4409, `Sandbox ${entry.view.sandbox_id} is not ready`);
    servePty(socket, entry, entry.sandbox, Math.floor(table.remainingLifetimeS(entry) * 1000));
  });
};

/** The part of a `ws` WebSocket the PTY route uses. */
interface PtySocket {
  readonly readyState: number;
  readonly OPEN: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: 'close', listener: () => void): void;
}

/** Runs one PTY session over the socket: init within 10 s, then frames both ways until exit, error or the client leaves. */
function servePty(socket: PtySocket, entry: SandboxEntry, sandbox: Sandbox, timeoutMs: number): void {
  let session: PtySession | undefined;
  const send = (frame: PtyServerFrame): void => {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(frame));
    // As the agent: the socket closes after `exit` (normally) or `error` (4500).
    if (frame.type === 'exit') socket.close(1000);
    if (frame.type === 'error') socket.close(4500, frame.message.slice(0, 120));
  };
  const refuse = (message: string): void => {
    socket.send(JSON.stringify({ type: 'error', message }));
    socket.close(4400, message.slice(0, 120));
  };
  const initTimer = setTimeout(() => refuse('init timeout'), 10_000);
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    let frame: unknown;
    try {
      frame = JSON.parse(data.toString('utf8'));
    } catch {
      if (!session) refuse('bad init frame: not JSON');
      return;
    }
    if (!session) {
      clearTimeout(initTimer);
      const init = isBinary ? 'init must be a text frame' : parseInit(frame);
      if (typeof init === 'string') return refuse(`bad init frame: ${init}`);
      if (entry.deleted) return refuse(`Sandbox ${entry.view.sandbox_id} was deleted`);
      session = new PtySession({ sandbox, init, timeoutMs, send });
      return;
    }
    const message = frame as Record<string, unknown>;
    if (message.type === 'stdin' && typeof message.data === 'string') session.write(Buffer.from(message.data, 'base64'));
    else if (message.type === 'signal') session.signal(message.sig ?? 'TERM');
    else if (message.type === 'resize') session.resize(message.rows, message.cols);
    else if (message.type === 'close') session.close();
  });
  socket.on('close', () => {
    clearTimeout(initTimer);
    session?.abandon();
  });
}
