/**
 * The host's end of the exec agent against an agent that breaks the protocol. The agent runs as
 * the sandbox user, so a command could take it over: whatever it sends must end in a lost sandbox,
 * never in unbounded buffering or a crash of the server. The stand-in speaks the real framing
 * (`>IcI` headers, local-agent-script.ts) from a child process.
 */
import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { ExecAgent } from '../../src/sandbox/providers/local/exec-agent.js';

/** A child that says hello, reads one request, then writes `reply` (JS source building a Buffer). */
function standIn(reply: string): string[] {
  const script = [
    "const frame = (type, id, payload = Buffer.alloc(0)) => { const head = Buffer.alloc(9); head.writeUInt32BE(payload.length, 0); head.write(type, 4, 'latin1'); head.writeUInt32BE(id, 5); return Buffer.concat([head, payload]); };",
    "process.stdout.write(frame('H', 0, Buffer.from('1')));",
    `process.stdin.once('data', () => { process.stdout.write(${reply}); });`,
    'setInterval(() => undefined, 1000);',
  ].join('\n');
  return [process.execPath, '-e', script];
}

async function lostBy(reply: string): Promise<{ code: string | undefined; message: string }> {
  const agent = await ExecAgent.start('sbx-test', standIn(reply), Buffer.alloc(0));
  try {
    const error = await agent.run({ argv: ['sh', '-c', 'true'], env: {}, cwd: '/', timeoutMs: 10_000, maxOutputBytes: 1024 }).result.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(agent.lost).toBeDefined();
    return { code: WinnowerError.isInstance(error) ? error.code : String(error), message: (error as Error).message };
  } finally {
    await agent.close();
  }
}

describe('exec agent protocol: a broken agent is a lost sandbox', () => {
  it('an oversized frame header', async () => {
    const lost = await lostBy(
      "(() => { const head = Buffer.alloc(9); head.writeUInt32BE(0x7fffffff, 0); head.write('O', 4, 'latin1'); head.writeUInt32BE(1, 5); return head; })()",
    );
    expect(lost.code).toBe('WNW_ERR_SBX_LOST');
    expect(lost.message).toContain('frame of 2147483647 bytes');
  });

  it('an answer that is not JSON', async () => {
    const lost = await lostBy("frame('D', 1, Buffer.from('{not json'))");
    expect(lost.code).toBe('WNW_ERR_SBX_LOST');
    expect(lost.message).toContain('not JSON');
  });

  it('an agent that exits', async () => {
    const lost = await lostBy('Buffer.alloc(0)); process.exit(3); (0');
    expect(lost.code).toBe('WNW_ERR_SBX_LOST');
    expect(lost.message).toContain('exited (code 3)');
  });
});
