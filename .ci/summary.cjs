// After `npm test`: the counts, and a failure when a test that CI set up for was skipped anyway
// (a folder moved, a tag renamed, a tool missing): a skip there is a silent hole, not a pass.
const fs = require('node:fs');
const path = require('node:path');
const results = require(path.resolve('.vitest-results.json'));
const shared = process.env.WINNOWER_SHARED_DATA ? path.resolve(process.env.WINNOWER_SHARED_DATA) : path.resolve('..', 'shared', 'data');
const tests = results.testResults.flatMap((file) => file.assertionResults);
const nameOf = (t) => t.fullName || [...t.ancestorTitles, t.title].join(' ');
const ran = (t) => t.status === 'passed' || t.status === 'failed';

// tag, what CI provided for it, and whether it did (only then is a skip a failure).
const required = [
  ['[real-data]', `${shared} ${fs.existsSync(shared) ? 'present' : 'missing'}`, fs.existsSync(shared)],
  ['[images]', 'skopeo, umoci and a loopback registry', true],
  ['[harness-cli]', 'the pi and claude-code CLIs (.ci/harnesses.sh)', true],
  ['[docker-engine]', process.env.WINNOWER_DOCKER_HOST || 'no engine', Boolean(process.env.WINNOWER_DOCKER_HOST)],
  ['[browser]', "Debian's chromium (/usr/bin/chromium)", true],
];
let failed = false;
for (const [tag, provided, mustRun] of required) {
  const tagged = tests.filter((t) => nameOf(t).includes(tag));
  const skipped = tagged.filter((t) => !ran(t));
  console.log(`${tag} tests: ${tagged.length - skipped.length} run, ${skipped.length} skipped (${provided})`);
  if (!mustRun) continue;
  for (const t of skipped.slice(0, 20)) console.error(`skipped although CI provides ${provided}: ${nameOf(t)}`);
  if (tagged.length === 0) console.error(`no ${tag} test ran although CI provides ${provided}`);
  if (skipped.length > 0 || tagged.length === 0) failed = true;
}
// Everything else CI provides too (bubblewrap, python3 with Jinja2, cgroups as root): a skip is
// only allowed for what CI deliberately leaves out, named here.
const allowedSkips = [/the real codex CLI/];
const stray = tests.filter((t) => !ran(t) && !allowedSkips.some((pattern) => pattern.test(nameOf(t))));
for (const t of tests.filter((t) => !ran(t))) console.log(`skipped: ${nameOf(t)}`);
for (const t of stray.slice(0, 20)) console.error(`skipped in CI, and not on the list of what CI leaves out: ${nameOf(t)}`);
if (stray.length > 0) failed = true;
// The suite's wall time against its 10-minute budget, and where it went: this tail is what a CI
// report shows, and per-file times are how the suite is kept under budget.
const os = require('node:os');
const files = results.testResults.map((file) => ({
  name: path.relative(process.cwd(), file.name),
  seconds: (file.endTime - file.startTime) / 1000,
}));
const ended = Math.max(...results.testResults.map((file) => file.endTime));
console.log(`suite: ${((ended - results.startTime) / 1000).toFixed(0)} s on ${os.availableParallelism()} cores; slowest files:`);
for (const file of files.sort((a, b) => b.seconds - a.seconds).slice(0, 12))
  console.log(`  ${file.seconds.toFixed(1).padStart(6)} s  ${file.name}`);
console.log(
  `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests + results.numTodoTests} skipped`,
);
process.exit(failed ? 1 : 0);
