// Adds up the vitest JSON reports the test runs leave in each package and prints one closing line
// in the "N passed, N failed" form. Exits non-zero when any test (or a whole suite) failed, or when a package with a
// `test` script left no report (unless `--partial`: a filtered run covers only some packages).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { workspacePackages } from './workspace.mjs';

const partial = process.argv.includes('--partial');
let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const broken = [];
for (const { folder, relative, manifest } of workspacePackages()) {
  if (manifest.scripts?.test === undefined) continue;
  const report = join(folder, '.vitest-report.json');
  if (!existsSync(report)) {
    missing.push(relative);
    continue;
  }
  const data = JSON.parse(readFileSync(report, 'utf8'));
  passed += data.numPassedTests ?? 0;
  failed += data.numFailedTests ?? 0;
  skipped += (data.numPendingTests ?? 0) + (data.numTodoTests ?? 0);
  // A suite that failed to load, or a type test error, fails the run without failing a test.
  const brokenRun = data.success === false && (data.numFailedTests ?? 0) === 0;
  if (brokenRun) broken.push(relative);
  const note = brokenRun ? ' (the run failed: see its output)' : '';
  console.log(`${relative}: ${data.numPassedTests} passed, ${data.numFailedTests} failed${note}`);
  for (const line of failedTests(data)) console.log(`  failed: ${line}`);
}
if (missing.length > 0 && !partial) console.log(`no test report from: ${missing.join(', ')}`);
/**
 * Each failed test of a report as "file > name: first line of its error", so a log that keeps
 * only the summary still says what failed.
 * @param {{ testResults?: { name?: string, assertionResults?: { status?: string, fullName?: string, failureMessages?: string[] }[] }[] }} data
 * @returns {string[]}
 */
function failedTests(data) {
  const lines = [];
  for (const file of data.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const reason = (test.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300);
      const where = (file.name ?? '').replace(/^.*?\/(packages|apps|tooling|benchmarks)\//, '$1/');
      lines.push(`${where} > ${test.fullName ?? '?'}: ${reason}`);
    }
  }
  return lines;
}

console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode =
  failed > 0 || broken.length > 0 || (missing.length > 0 && !partial) || passed === 0 ? 1 : 0;
