import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerStreamDemuxer, type DockerStreamName } from '../../src/sandbox/providers/docker/stream.js';
import { readTar, writeTar } from '../../src/sandbox/providers/docker/tar.js';

function frame(type: number, text: string | Buffer): Buffer {
  const payload = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const head = Buffer.alloc(8);
  head[0] = type;
  head.writeUInt32BE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

function demux(chunks: Buffer[], tty = false): { stdout: string; stderr: string; leftover: number } {
  const out: Record<DockerStreamName, Buffer[]> = { stdout: [], stderr: [] };
  const demuxer = new DockerStreamDemuxer((stream, payload) => out[stream].push(Buffer.from(payload)), { tty });
  for (const chunk of chunks) demuxer.push(chunk);
  const leftover = demuxer.end();
  return { stdout: Buffer.concat(out.stdout).toString(), stderr: Buffer.concat(out.stderr).toString(), leftover };
}

describe('docker stream demultiplexer', () => {
  const stream = Buffer.concat([
    frame(1, 'hello '),
    frame(2, 'warn\n'),
    frame(1, 'world\n'),
    frame(1, ''),
    frame(2, Buffer.alloc(70_000, 0x41)),
  ]);

  it('splits stdout and stderr frames', () => {
    expect(demux([stream])).toEqual({ stdout: 'hello world\n', stderr: `warn\n${'A'.repeat(70_000)}`, leftover: 0 });
  });

  it('handles frames and headers split at every byte', () => {
    const chunks = [...stream].map((byte) => Buffer.from([byte]));
    expect(demux(chunks).stdout).toBe('hello world\n');
    for (const size of [3, 7, 8, 9, 511]) {
      const split: Buffer[] = [];
      for (let offset = 0; offset < stream.length; offset += size) split.push(stream.subarray(offset, offset + size));
      expect(demux(split)).toEqual(demux([stream]));
    }
  });

  it('reports a stream cut inside a frame', () => {
    expect(demux([stream.subarray(0, 10)])).toEqual({ stdout: 'he', stderr: '', leftover: 4 });
    expect(demux([stream.subarray(0, 5)]).leftover).toBe(5);
  });

  it('passes a TTY stream through as stdout, even when its bytes look like a frame header', () => {
    expect(demux([Buffer.from('plain output\n'), Buffer.from('more')], true)).toEqual({
      stdout: 'plain output\nmore',
      stderr: '',
      leftover: 0,
    });
    // Framing comes from the Tty flag, not from guessing: these bytes are a valid stderr header.
    expect(demux([frame(2, 'not a frame')], true).stdout).toBe(`\x02\x00\x00\x00\x00\x00\x00\x0bnot a frame`);
  });

  it('without a TTY, a stream that breaks its framing is WNW_ERR_SBX_UPSTREAM, not output', () => {
    expect(() => demux([Buffer.from('plain output\n')])).toThrow(expect.objectContaining({ code: 'WNW_ERR_SBX_UPSTREAM' }));
    expect(() => demux([frame(1, 'ok\n'), Buffer.from('garbage!')])).toThrow(/malformed exec stream/);
  });
});

describe('docker tar codec', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docker-tar-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const longName = `${'deep/'.repeat(30)}file-with-a-long-name.txt`;
  const veryLong = `${'x'.repeat(120)}/${'y'.repeat(120)}.txt`;

  it('writes archives GNU tar extracts, long names included', () => {
    const target = join(dir, 'extract');
    mkdirSync(target);
    const archive = writeTar([
      { name: 'a.txt', content: Buffer.from('alpha\n') },
      { name: 'bin/blob.bin', content: Uint8Array.from({ length: 1500 }, (_, index) => index % 256), mode: 0o755 },
      { name: 'empty-dir', type: 'directory' },
      { name: longName, content: Buffer.from('long\n') },
      { name: veryLong, content: Buffer.from('very long\n') },
      { name: 'héllo.txt', content: Buffer.from('unicode\n') },
    ]);
    expect(archive.length % 512).toBe(0);
    writeFileSync(join(dir, 'out.tar'), archive);
    execFileSync('tar', ['-x', '--no-same-owner', '-f', join(dir, 'out.tar'), '-C', target]);
    expect(readFileSync(join(target, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(readFileSync(join(target, 'bin/blob.bin'))).toEqual(Buffer.from(Uint8Array.from({ length: 1500 }, (_, index) => index % 256)));
    expect(readFileSync(join(target, longName), 'utf8')).toBe('long\n');
    expect(readFileSync(join(target, veryLong), 'utf8')).toBe('very long\n');
    expect(readFileSync(join(target, 'héllo.txt'), 'utf8')).toBe('unicode\n');
    expect(execFileSync('stat', ['-c', '%a', join(target, 'bin/blob.bin')], { encoding: 'utf8' }).trim()).toBe('755');
  });

  it('reads archives written by GNU tar (gnu, ustar and pax formats)', () => {
    const source = join(dir, 'source');
    mkdirSync(join(source, 'sub'), { recursive: true });
    writeFileSync(join(source, 'sub', 'f.txt'), 'content\n');
    mkdirSync(join(source, longName, '..'), { recursive: true });
    writeFileSync(join(source, longName), 'long\n');
    symlinkSync('sub/f.txt', join(source, 'link'));
    for (const format of ['gnu', 'ustar', 'pax']) {
      const archive = execFileSync('tar', ['-c', `--format=${format}`, '-C', source, 'sub', 'link', 'deep']);
      const entries = readTar(archive);
      const byName = new Map(entries.map((entry) => [entry.name.replace(/\/$/, ''), entry]));
      expect(byName.get('sub')?.type).toBe('directory');
      expect(byName.get('sub/f.txt')?.content.toString()).toBe('content\n');
      expect(byName.get('link')).toMatchObject({ type: 'symlink', linkName: 'sub/f.txt' });
      if (format !== 'ustar') expect(byName.get(longName)?.content.toString()).toBe('long\n');
    }
  });

  it('round-trips its own archives and rejects a damaged header', () => {
    const archive = writeTar([
      { name: veryLong, content: Buffer.from('v') },
      { name: 'd', type: 'directory' },
    ]);
    expect(readTar(archive).map(({ name, type, size }) => ({ name, type, size }))).toEqual([
      { name: veryLong, type: 'file', size: 1 },
      { name: 'd/', type: 'directory', size: 0 },
    ]);
    const damaged = Buffer.from(archive);
    damaged[1030] = (damaged[1030] ?? 0) ^ 0xff;
    expect(() => readTar(damaged)).toThrow(/checksum/);
  });
});

describe('docker response schemas', () => {
  const fixture = (name: string): unknown =>
    JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/docker', `${name}.json`), 'utf8'));

  it('parses the documented shapes', async () => {
    const types = await import('../../src/sandbox/providers/docker/api-types.js');
    expect(types.DockerCreateResponse.parse(fixture('container-create')).Id).toHaveLength(64);
    expect(types.DockerExecInspect.parse(fixture('exec-inspect-exited'))).toMatchObject({ Running: false, ExitCode: 2 });
    expect(types.DockerExecInspect.parse(fixture('exec-inspect-running'))).toMatchObject({ Running: true, ExitCode: null });
    expect(types.DockerContainerInspect.parse(fixture('container-inspect-oom')).State).toMatchObject({ Running: false, OOMKilled: true });
    expect(types.DockerErrorBody.parse(fixture('error-no-such-image')).message).toContain('No such image');
    expect(types.DockerVersion.parse(fixture('version'))).toMatchObject({ Version: '24.0.7', ApiVersion: '1.43' });
    const stat = types.DockerPathStat.parse(fixture('path-stat-dir'));
    expect(types.hasModeBit(stat.mode, types.GO_MODE_DIR)).toBe(true);
    expect(types.hasModeBit(stat.mode, types.GO_MODE_SYMLINK)).toBe(false);
    expect(stat.mode % 0o1000).toBe(0o755);
  });
});
