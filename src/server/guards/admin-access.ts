/**
 * Who may call `/admin/*` (swap the value model): with `server.api_keys` configured, any client
 * with a key (the auth hook has checked it before this runs); without keys, only a client on this
 * host (the socket's peer is a loopback address), because anyone who can reach a keyless server
 * beyond loopback could otherwise replace the model every job is scored with. A reverse proxy on
 * the same host makes every client look local: configure API keys behind one.
 */
import type { FastifyRequest } from 'fastify';
import { wnwError } from '../../errors.js';

/** 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (::ffff:127.x.y.z). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export function checkAdminAccess(request: FastifyRequest, keyed: boolean): void {
  if (keyed) return;
  // The socket's own peer, not request.ip: no forwarded header can make a remote client local.
  const peer = request.raw.socket?.remoteAddress;
  if (!isLoopback(peer)) {
    throw wnwError(
      'WNW_ERR_AUTH_ADMIN',
      'admin routes answer clients on this host only while the server has no API keys: configure server.api_keys (WINNOWER_API_KEYS) to call them from elsewhere',
      {
        details: { peer: peer ?? null },
      },
    );
  }
}
