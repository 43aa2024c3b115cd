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
}
if (missing.length > 0 && !partial) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode =
  failed > 0 || broken.length > 0 || (missing.length > 0 && !partial) || passed === 0 ? 1 : 0;
