/**
 * The job store holds every request (issues, repository paths, patches, policy addresses): its
 * folder is created 0700 and its database 0600, whatever the umask. SQLite gives its `-wal` and
 * `-shm` files the database's own mode, so creating the database 0600 before SQLite opens it
 * covers them too; a store left by an older version (0644) is tightened when opened.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

/** Creates `folder` (0700) when missing, and `file` in it (0600), tightening an existing file and its WAL/SHM companions. */
export function preparePrivateDatabase(folder: string, file: string): void {
  if (!existsSync(folder)) mkdirSync(folder, { recursive: true, mode: FOLDER_MODE });
  closeSync(openSync(file, 'a', FILE_MODE));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path)) chmodSync(path, FILE_MODE);
  }
}
