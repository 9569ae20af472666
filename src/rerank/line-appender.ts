/**
 * Appends whole lines to one file from concurrent tasks. `appendFile` writes a large buffer in
 * 512 KiB pieces, so two rows appended at once could be spliced into each other; here each append
 * starts only when the one before it has ended.
 */
import { appendFile } from 'node:fs/promises';

export class LineAppender {
  #tail: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  /** Appends `lines`, each with its line break, after everything appended before. */
  append(lines: readonly string[]): Promise<void> {
    const text = lines.map((line) => `${line}\n`).join('');
    const written = this.#tail.then(() => appendFile(this.file, text));
    // A failed append is the caller's to handle; it must not stop the ones queued after it.
    this.#tail = written.catch(() => undefined);
    return written;
  }
}
