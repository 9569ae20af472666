/**
 * Who may call `/admin/*` (swap the value model every job is scored with). With
 * `server.admin_keys`, a client presenting one of them, and no one else: an API key opens the
 * ordinary routes, not these. Without admin keys, only a client on this host (the socket's peer is
 * a loopback address; the auth hook has checked its API key first when the server has some). A
 * reverse proxy on the same host makes every client look local: configure admin keys behind one.
 */
import type { FastifyRequest } from 'fastify';
import { wnwError } from '../../errors.js';
import { secretMatcher } from '../../util/secret-compare.js';
import { presentedKey } from '../plugins/auth.js';
/** 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (::ffff:127.x.y.z). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export function adminAccess(adminKeys: readonly string[]): (request: FastifyRequest) => void {
  const matches = adminKeys.length > 0 ? secretMatcher([...adminKeys]) : undefined;
  return (request) => {
    if (matches) {
      const given = presentedKey(request);
      if (given !== undefined && matches(given)) return;
      throw wnwError('WNW_ERR_AUTH_ADMIN', 'admin routes need an admin key (server.admin_keys): an API key does not open them', {
        details: { admin_key: given === undefined ? 'missing' : 'not an admin key' },
      });
    }
    // The socket's own peer, not request.ip: no forwarded header can make a remote client local.
    const peer = request.raw.socket?.remoteAddress;
    if (!isLoopback(peer)) {
      throw wnwError(
        'WNW_ERR_AUTH_ADMIN',
        'admin routes answer clients on this host only while the server has no admin keys: configure server.admin_keys (WINNOWER_ADMIN_KEYS) to call them from elsewhere',
        { details: { peer: peer ?? null } },
      );
    }
  };
}
