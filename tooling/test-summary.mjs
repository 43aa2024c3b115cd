// Adds up the vitest JSON reports that CI runs leave in each package and prints one closing line
// in the "N passed, N failed" form. Exits non-zero when a report is missing for a package that
// has tests, or when any test failed.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const group of ['packages', 'apps']) {
  const folder = join(root, group);
  if (!existsSync(folder)) continue;
  for (const name of readdirSync(folder)) {
    const packageFolder = join(folder, name);
    if (!existsSync(join(packageFolder, 'package.json'))) continue;
    const report = join(packageFolder, '.vitest-report.json');
    if (!existsSync(report)) {
      missing.push(`${group}/${name}`);
      continue;
    }
    const data = JSON.parse(readFileSync(report, 'utf8'));
    passed += data.numPassedTests ?? 0;
    failed += data.numFailedTests ?? 0;
    skipped += (data.numPendingTests ?? 0) + (data.numTodoTests ?? 0);
    console.log(`${group}/${name}: ${data.numPassedTests} passed, ${data.numFailedTests} failed`);
  }
}
if (missing.length > 0) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 || missing.length > 0 || passed === 0 ? 1 : 0;
