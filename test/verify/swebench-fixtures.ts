/**
 * Loads SWE-bench harness logs laid out as the harness writes them (one folder per instance with
 * `eval.sh`, `test_output.txt` and `report.json`): our own in test/fixtures/harness-logs (see its
 * README for the case each one covers), and the real ones in ../shared/data/swebench-logs (see
 * that README for provenance and the verdicts known to be wrong).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedData } from '../support/shared-data.js';

/** Harness-shaped logs written for winnower (invented repositories and tests). */
export const OWN_LOGS = fileURLToPath(new URL('../fixtures/harness-logs/', import.meta.url));
/** Real harness logs of a public run, outside the repository (may be missing). */
export const REAL_LOGS = sharedData('swebench-logs');

export interface HarnessReport {
  resolved: boolean;
  f2pSuccess: string[];
  f2pFailure: string[];
  p2pSuccess: string[];
  p2pFailure: string[];
}

export interface SwebenchFixture {
  instanceId: string;
  log: string;
  evalSh: string;
  /** The command between the harness markers in eval.sh. */
  testCommand: string;
  /** The gold test patch applied by eval.sh. */
  testPatch: string;
  report: HarnessReport | undefined;
}

export function loadFixture(root: string, instanceId: string): SwebenchFixture {
  const dir = join(root, instanceId);
  const log = readFileSync(join(dir, 'test_output.txt'), 'utf8');
  const evalSh = readFileSync(join(dir, 'eval.sh'), 'utf8');
  const testCommand = /^: '>>>>> Start Test Output'\n([\s\S]*?)\n: '>>>>> End Test Output'/m.exec(evalSh)?.[1] ?? '';
  const testPatch = /<<'EOF_114329324912'\n([\s\S]*?)\nEOF_114329324912/.exec(evalSh)?.[1] ?? '';
  const reportPath = join(dir, 'report.json');
  let report: HarnessReport | undefined;
  if (existsSync(reportPath)) {
    const raw = JSON.parse(readFileSync(reportPath, 'utf8')) as Record<
      string,
      {
        resolved: boolean;
        tests_status: Record<'FAIL_TO_PASS' | 'PASS_TO_PASS', { success: string[]; failure: string[] }>;
      }
    >;
    const entry = raw[instanceId]!;
    report = {
      resolved: entry.resolved,
      f2pSuccess: entry.tests_status.FAIL_TO_PASS.success,
      f2pFailure: entry.tests_status.FAIL_TO_PASS.failure,
      p2pSuccess: entry.tests_status.PASS_TO_PASS.success,
      p2pFailure: entry.tests_status.PASS_TO_PASS.failure,
    };
  }
  return { instanceId, log, evalSh, testCommand, testPatch, report };
}

/** The task as SWE-bench defines it: F2P/P2P are the union of success and failure lists. */
export function listsOf(report: HarnessReport): { failToPass: string[]; passToPass: string[] } {
  return {
    failToPass: [...report.f2pSuccess, ...report.f2pFailure],
    passToPass: [...report.p2pSuccess, ...report.p2pFailure],
  };
}
