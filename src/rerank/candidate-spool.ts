/**
 * Where a rerank run keeps its inputs while it works: every candidate and task record in a
 * temporary SQLite file, read back one instance at a time, so a run over 50,000 candidates holds
 * only the instances being scored, never every candidate at once (bench/results/rerank-scale.md).
 * In memory stays an index: each instance's candidate ids and sources, in input order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Task, Trajectory } from '../types/index.js';

/** A candidate as the index knows it: enough to match saved score lines and look up its label. */
export interface CandidateRef {
  id: string;
  source: string;
}

export interface CandidateSpool {
  add(trajectory: Trajectory): void;
  addTask(task: Task): void;
  /** Each instance's candidates (id and source), in input order; instances in order of their first candidate. */
  readonly instances: ReadonlyMap<string, readonly CandidateRef[]>;
  readonly candidateCount: number;
  /** An instance's candidates, read back in input order. */
  candidatesOf(instanceId: string): Trajectory[];
  task(instanceId: string): Task | undefined;
  hasTask(instanceId: string): boolean;
  readonly taskCount: number;
  /** The SQLite file (in a temporary folder of its own). */
  readonly file: string;
  /** Removes the file and its folder; idempotent. */
  close(): void;
}

export function createCandidateSpool(): CandidateSpool {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-'));
  const file = join(dir, 'inputs.sqlite');
  const db = new Database(file);
  // A scratch file, rebuilt by every run: nothing in it must survive a crash.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec(`CREATE TABLE candidates (seq INTEGER PRIMARY KEY, instance_id TEXT NOT NULL, body TEXT NOT NULL);
    CREATE INDEX candidates_instance ON candidates (instance_id, seq);
    CREATE TABLE tasks (instance_id TEXT PRIMARY KEY, body TEXT NOT NULL);`);
  const insert = db.prepare('INSERT INTO candidates (instance_id, body) VALUES (?, ?)');
  const insertTask = db.prepare('INSERT OR REPLACE INTO tasks (instance_id, body) VALUES (?, ?)');
  const select = db.prepare('SELECT body FROM candidates WHERE instance_id = ? ORDER BY seq');
  const selectTask = db.prepare('SELECT body FROM tasks WHERE instance_id = ?');
  const instances = new Map<string, CandidateRef[]>();
  const taskIds = new Set<string>();
  let count = 0;
  let closed = false;
  // One transaction per batch of inserts: a commit per row would make the import I/O-bound.
  const BATCH = 500;
  let pending = 0;
  const begin = (): void => {
    if (pending === 0) db.exec('BEGIN');
    pending += 1;
    if (pending >= BATCH) flush();
  };
  const flush = (): void => {
    if (pending === 0) return;
    db.exec('COMMIT');
    pending = 0;
  };
  return {
    file,
    add(trajectory) {
      begin();
      insert.run(trajectory.instance_id, JSON.stringify(trajectory));
      const refs = instances.get(trajectory.instance_id);
      const ref = { id: trajectory.id, source: trajectory.source };
      if (refs) refs.push(ref);
      else instances.set(trajectory.instance_id, [ref]);
      count += 1;
    },
    addTask(task) {
      begin();
      insertTask.run(task.instance_id, JSON.stringify(task));
      taskIds.add(task.instance_id);
    },
    instances,
    get candidateCount() {
      return count;
    },
    candidatesOf(instanceId) {
      flush();
      return (select.all(instanceId) as Array<{ body: string }>).map((row) => JSON.parse(row.body) as Trajectory);
    },
    task(instanceId) {
      if (!taskIds.has(instanceId)) return undefined;
      flush();
      const row = selectTask.get(instanceId) as { body: string } | undefined;
      return row ? (JSON.parse(row.body) as Task) : undefined;
    },
    hasTask: (instanceId) => taskIds.has(instanceId),
    get taskCount() {
      return taskIds.size;
    },
    close() {
      if (closed) return;
      closed = true;
      flush();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
