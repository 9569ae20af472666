/**
 * Demultiplexer of the Docker Engine attach/exec stream without a TTY: frames of an 8-byte
 * header `[type, 0, 0, 0, size (uint32, big endian)]` then `size` bytes, type 1 stdout and
 * 2 stderr (0 stdin, 3 system error). Frames arrive split across chunks in any way.
 * The framing follows the `Tty` flag the exec was created with, never the answer's Content-Type
 * (API <= 1.41 says `raw-stream` for multiplexed frames): with a TTY the bytes are stdout as they
 * come; without one, a bad frame header is a broken stream.
 */
import { wnwError } from '../../../errors.js';

export type DockerStreamName = 'stdout' | 'stderr';

const HEADER_BYTES = 8;

export class DockerStreamDemuxer {
  readonly #onData: (stream: DockerStreamName, payload: Buffer) => void;
  #buffer: Buffer = Buffer.alloc(0);
  /** Bytes still owed to the current frame, and its stream. */
  #remaining = 0;
  #current: DockerStreamName = 'stdout';
  readonly #raw: boolean;

  constructor(onData: (stream: DockerStreamName, payload: Buffer) => void, options: { tty: boolean }) {
    this.#onData = onData;
    this.#raw = options.tty;
  }

  push(chunk: Buffer): void {
    if (this.#raw) {
      if (chunk.length) this.#onData('stdout', chunk);
      return;
    }
    let data = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
    this.#buffer = Buffer.alloc(0);
    while (data.length > 0) {
      if (this.#remaining > 0) {
        const take = Math.min(this.#remaining, data.length);
        this.#onData(this.#current, data.subarray(0, take));
        this.#remaining -= take;
        data = data.subarray(take);
        continue;
      }
      if (data.length < HEADER_BYTES) {
        this.#buffer = Buffer.from(data);
        return;
      }
      const type = data[0] ?? 255;
      if (type > 3 || data[1] !== 0 || data[2] !== 0 || data[3] !== 0) {
        throw wnwError(
          'WNW_ERR_SBX_UPSTREAM',
          `Docker Engine sent a malformed exec stream (frame header ${data.subarray(0, HEADER_BYTES).toString('hex')})`,
          {
            details: { header: data.subarray(0, HEADER_BYTES).toString('hex') },
          },
        );
      }
      // stdin echoes (0) and system errors (3) are reported on stderr rather than dropped.
      this.#current = type === 1 ? 'stdout' : 'stderr';
      this.#remaining = data.readUInt32BE(4);
      data = data.subarray(HEADER_BYTES);
    }
  }

  /** Bytes of a header cut short by the end of the stream (0 when the stream ended cleanly). */
  end(): number {
    const leftover = this.#buffer.length + this.#remaining;
    this.#buffer = Buffer.alloc(0);
    this.#remaining = 0;
    return leftover;
  }
}
