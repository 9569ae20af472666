/**
 * A job's and a candidate's rows as both SQL stores keep them (JSON columns as text) and their
 * records: one mapping, so SQLite and Postgres read and write the same shapes.
 */
import type { CandidateRecord, JobRecord, JobStatus } from './types.js';

export interface JobRow {
  id: string;
  kind: string;
  status: string;
  request: string;
  progress: string;
  result: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface CandidateRow {
  job_id: string;
  idx: number;
  status: string;
  trajectory: string | null;
  score: string | null;
  verify: string | null;
  error: string | null;
  reused_from: string | null;
  updated_at: string;
}

export const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
export const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

export function toJob(row: JobRow): JobRecord {
  return {
    id: row.id,
    kind: row.kind as JobRecord['kind'],
    status: row.status as JobStatus,
    request: JSON.parse(row.request),
    progress: JSON.parse(row.progress),
    result: parse(row.result),
    error: parse(row.error),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toCandidate(row: CandidateRow): CandidateRecord {
  return {
    job_id: row.job_id,
    index: row.idx,
    status: row.status as CandidateRecord['status'],
    trajectory: parse(row.trajectory),
    score: parse(row.score),
    verify: parse(row.verify),
    error: parse(row.error),
    reused_from: parse(row.reused_from),
    updated_at: row.updated_at,
  };
}

export const JOB_STATUSES: JobStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted'];
