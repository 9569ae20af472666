/** `winnower serve` on a port another process holds: exit 2 naming server.port and what to do, no stack trace, the store closed. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('winnower serve on a port in use', () => {
  let holder: Server;
  let port: number;
  const dataDir = mkdtempSync(join(tmpdir(), 'wnw-port-'));

  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('exits 2 naming server.port and the flags to change, and closes the store it had opened', async () => {
    const { code, stderr } = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir], {
      env: { WINNOWER_POLICY_URL: '' },
      timeoutMs: 60_000,
    });
    expect(code).toBe(2);
    expect(stderr).toContain(`WNW_ERR_CFG_INVALID: server.port: 127.0.0.1:${port} is in use by another process`);
    expect(stderr).toContain('--port (server.port)');
    expect(stderr).not.toMatch(/node:net|at .*\(node:/);
    // Closed cleanly: SQLite folds its write-ahead log back into the database on close.
    expect(existsSync(join(dataDir, 'winnower.db'))).toBe(true);
    expect(existsSync(join(dataDir, 'winnower.db-wal'))).toBe(false);
  }, 90_000);
});
