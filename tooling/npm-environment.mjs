// The environment for an npm process started from a pnpm script. pnpm passes its own settings to
// the scripts it runs as npm_config_* variables (verify_deps_before_run, link_workspace_packages,
// recursive, _jsr_registry, …), and npm reads every npm_config_* variable as its own setting and
// warns, once per variable and per run, "Unknown env config". `npmEnvironment` leaves out the
// npm_config_* variables npm does not know, and keeps the ones it does (a registry, a proxy, a
// cache folder the user set), scoped registries (`@scope:registry`) and per-registry settings
// (`//host/:_authToken`), which npm reads too.
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';

let known;

/**
 * The settings npm knows: what `npm config ls -l --json` lists with no npm_config_* variable set
 * (with them, it would list them too), asked once per process.
 * @returns {Set<string>}
 */
function knownSettings() {
  if (known !== undefined) return known;
  const listed = execFileSync('npm', ['config', 'ls', '-l', '--json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // Outside any project: a project's .npmrc would add its own keys to the list.
    cwd: tmpdir(),
    env: withoutNpmSettings(process.env),
    shell: process.platform === 'win32',
  });
  // npm sets these two for the scripts it runs and reads them back without a warning.
  known = new Set([...Object.keys(JSON.parse(listed)), 'global-prefix', 'local-prefix']);
  return known;
}

function withoutNpmSettings(environment) {
  return Object.fromEntries(
    Object.entries(environment).filter(([name]) => !/^npm_config_/i.test(name)),
  );
}

/** The setting an npm_config_* variable names, spelled as npm spells it (its own rule). */
function settingOf(variable) {
  const key = variable.slice('npm_config_'.length);
  return key.startsWith('//') ? key : key.replace(/(?!^)_/g, '-').toLowerCase();
}

/**
 * Whether npm reads `setting` without a warning: a setting it knows, a scoped or per-registry
 * one (`@scope:registry`, `//registry.example/:_authToken`).
 * @param {string} setting
 * @param {Set<string>} settings
 */
function npmKnows(setting, settings) {
  if (setting.startsWith('//') || settings.has(setting)) return true;
  return setting.includes(':') && settings.has(setting.split(':').pop() ?? '');
}

/**
 * `environment` without the npm_config_* variables npm does not know (see the file's header), so
 * an npm started with it prints no "Unknown env config" warning.
 * @param {NodeJS.ProcessEnv} [environment] default: this process's
 * @returns {NodeJS.ProcessEnv}
 */
export function npmEnvironment(environment = process.env) {
  const settings = knownSettings();
  return Object.fromEntries(
    Object.entries(environment).filter(
      ([name]) => !/^npm_config_/i.test(name) || npmKnows(settingOf(name), settings),
    ),
  );
}
