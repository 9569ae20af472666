/**
 * A minimal tar writer and reader for the Docker archive endpoints (PUT and GET
 * /containers/{id}/archive): ustar headers, PAX `path`/`linkpath`/`size` records for long
 * names, GNU long names (`L`/`K`) and base-256 sizes when reading. No compression.
 */

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface TarEntryInput {
  name: string;
  type?: 'file' | 'directory';
  content?: Uint8Array;
  /** Permission bits (default 0o644 for files, 0o755 for directories). */
  mode?: number;
  uid?: number;
  gid?: number;
  /** Seconds since the epoch (default now). */
  mtime?: number;
}

export interface TarEntry {
  name: string;
  type: TarEntryType;
  mode: number;
  size: number;
  linkName: string;
  content: Buffer;
}

const BLOCK = 512;
const encoder = new TextEncoder();

/** A tar archive holding `entries`, closed by two zero blocks. */
export function writeTar(entries: TarEntryInput[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    const content = type === 'file' ? Buffer.from(entry.content ?? new Uint8Array()) : Buffer.alloc(0);
    const name = type === 'directory' && !entry.name.endsWith('/') ? `${entry.name}/` : entry.name;
    const split = splitName(name);
    const common = {
      mode: entry.mode ?? (type === 'directory' ? 0o755 : 0o644),
      uid: entry.uid ?? 0,
      gid: entry.gid ?? 0,
      mtime: entry.mtime ?? Math.floor(Date.now() / 1000),
    };
    if (!split) {
      const record = paxRecord('path', name);
      parts.push(header({ ...common, name: 'PaxHeader', prefix: '', size: record.length, typeflag: 'x' }), pad(record));
    }
    parts.push(
      header({
        ...common,
        name: split?.name ?? name.slice(-100),
        prefix: split?.prefix ?? '',
        size: content.length,
        typeflag: type === 'directory' ? '5' : '0',
      }),
    );
    parts.push(pad(content));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

/** The entries of a tar archive; throws on a damaged header. */
export function readTar(archive: Uint8Array): TarEntry[] {
  const data = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  const entries: TarEntry[] = [];
  let offset = 0;
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  while (offset + BLOCK <= data.length) {
    const block = data.subarray(offset, offset + BLOCK);
    if (block.every((byte) => byte === 0)) break;
    if (!checksumMatches(block)) throw new Error(`tar: bad header checksum at offset ${offset}`);
    const typeflag = String.fromCharCode(block[156] ?? 0);
    const size = pax.size !== undefined ? Number(pax.size) : readNumber(block.subarray(124, 136));
    const start = offset + BLOCK;
    if (start + size > data.length) throw new Error(`tar: entry at offset ${offset} runs past the end of the archive`);
    const content = data.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === 'x') {
      pax = { ...pax, ...parsePax(content) };
      continue;
    }
    if (typeflag === 'g') continue;
    if (typeflag === 'L' || typeflag === 'K') {
      const text = cString(content);
      if (typeflag === 'L') longName = text;
      else longLink = text;
      continue;
    }
    const magic = block.subarray(257, 262).toString('latin1');
    const prefix = magic === 'ustar' ? cString(block.subarray(345, 500)) : '';
    const baseName = cString(block.subarray(0, 100));
    const name = pax.path ?? longName ?? (prefix ? `${prefix}/${baseName}` : baseName);
    entries.push({
      name,
      type:
        typeflag === '0' || typeflag === '\0' || typeflag === '7'
          ? 'file'
          : typeflag === '5'
            ? 'directory'
            : typeflag === '2'
              ? 'symlink'
              : 'other',
      mode: readNumber(block.subarray(100, 108)),
      size,
      linkName: pax.linkpath ?? longLink ?? cString(block.subarray(157, 257)),
      content: Buffer.from(content),
    });
    pax = {};
    longName = undefined;
    longLink = undefined;
  }
  return entries;
}

function splitName(name: string): { name: string; prefix: string } | undefined {
  const bytes = encoder.encode(name);
  if (bytes.length <= 100) return { name, prefix: '' };
  for (let index = name.indexOf('/'); index !== -1; index = name.indexOf('/', index + 1)) {
    const prefix = name.slice(0, index);
    const rest = name.slice(index + 1);
    if (encoder.encode(prefix).length <= 155 && encoder.encode(rest).length <= 100 && rest !== '') return { name: rest, prefix };
  }
  return undefined;
}

function header(fields: {
  name: string;
  prefix: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  typeflag: string;
}): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(fields.name, 0, 100, 'utf8');
  writeOctal(block, 100, 8, fields.mode);
  writeOctal(block, 108, 8, fields.uid);
  writeOctal(block, 116, 8, fields.gid);
  if (fields.size > 0o77777777777) throw new Error(`tar: ${fields.name} is larger than 8 GiB`);
  writeOctal(block, 124, 12, fields.size);
  writeOctal(block, 136, 12, fields.mtime);
  block.write(fields.typeflag, 156, 1, 'latin1');
  block.write('ustar\u000000', 257, 8, 'latin1');
  block.write(fields.prefix, 345, 155, 'utf8');
  block.fill(0x20, 148, 156);
  const sum = block.reduce((total, byte) => total + byte, 0);
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  return block;
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\u0000`, offset, length, 'latin1');
}

function readNumber(field: Buffer): number {
  if ((field[0] ?? 0) & 0x80) {
    // base-256 (GNU): big-endian, first byte's high bit is the marker
    let value = (field[0] ?? 0) & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/g, '')
    .replace(/^[\0 ]+/, '');
  return text === '' ? 0 : parseInt(text, 8);
}

function checksumMatches(block: Buffer): boolean {
  const stored = readNumber(block.subarray(148, 156));
  let sum = 0;
  for (let index = 0; index < BLOCK; index++) sum += index >= 148 && index < 156 ? 0x20 : (block[index] ?? 0);
  return stored === sum;
}

function paxRecord(key: string, value: string): Buffer {
  // "<length> key=value\n", where <length> counts its own digits.
  const body = ` ${key}=${value}\n`;
  const bodyLength = encoder.encode(body).length;
  let length = bodyLength + 1;
  while (String(length).length + bodyLength !== length) length = String(length).length + bodyLength;
  return Buffer.from(`${length}${body}`, 'utf8');
}

function parsePax(content: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number(content.subarray(offset, space).toString('latin1'));
    if (!Number.isInteger(length) || length <= 0) break;
    const record = content.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records[record.slice(0, equals)] = record.slice(equals + 1);
    offset += length;
  }
  return records;
}

function pad(content: Buffer): Buffer {
  const rest = content.length % BLOCK;
  return rest === 0 ? content : Buffer.concat([content, Buffer.alloc(BLOCK - rest)]);
}

function cString(field: Buffer): string {
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
}
