/**
 * The demo's bug (examples/demo) as a Harbor task folder, for the CLI tests: task.toml,
 * instruction.md (with a canary line), a Dockerfile with WORKDIR /app, and tests/test.sh that runs
 * the repository's tests and the task's own and writes reward.txt. The code comes as a checkout.
 */
import { demoTask } from '../../../src/cli/demo-task.js';
import { writeTaskFolder } from './example-task.js';

export const MULTI_DIGIT_TEST = `import unittest

from durations import format_duration, parse_duration


class MultiDigitTests(unittest.TestCase):
    def test_hours_and_minutes(self):
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_three_digit_amounts(self):
        self.assertEqual(parse_duration("120m"), 7200)

    def test_round_trip_large(self):
        self.assertEqual(format_duration(parse_duration("12h45m30s")), "12h45m30s")
`;

/** The verifier: the task's tests beside the repository's own; pass all, reward 1; the exit code says nothing. */
export const TEST_SH = `#!/bin/bash
cd /app
cp /tests/test_multi_digit.py tests/
if python3 -m unittest tests.test_durations tests.test_multi_digit; then r=1; else r=0; fi
echo "$r" > /logs/verifier/reward.txt
exit 0
`;

/** Writes the task into `dir` (made when missing) under `name`, and returns `dir`. */
export function writeDurationsTask(dir: string, name = 'winnower/durations'): string {
  return writeTaskFolder(
    {
      'task.toml': `schema_version = "1.4"\n[task]\nname = "${name}"\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n[environment]\nnetwork_mode = "no-network"\n`,
      'instruction.md': `<!-- harbor canary GUID 0000 -->\n\n${demoTask().problem_statement}`,
      'environment/Dockerfile': 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app/\n',
      'tests/test.sh': TEST_SH,
      'tests/test_multi_digit.py': MULTI_DIGIT_TEST,
    },
    dir,
  );
}
