// Which AI SDK major (6 or 7) the workspace's tests and apps run against. The workspace
// installs both majors: `ai` (7, the default) and, under tooling/, the aliases `ai-v6`,
// `@ai-sdk/openai-v3` and `@ai-sdk/react-v3` (AI SDK 6 and its companions). AI SDK 7 uses the
// packages as installed; AI SDK 6 swaps every import of `ai` (and those companions) for the
// aliases, in vitest through
// the plugin in vitest-plugin.ts and in plain Node processes through hooks.mjs (register.mjs).
//
// The major is CTXGRAPH_AI_MAJOR (6 or 7) when set, else the one the running Node supports:
// AI SDK 7 needs Node 22 or newer, so Node 20 runs AI SDK 6 and Node 22+ AI SDK 7.
import { fileURLToPath } from 'node:url';

/** @typedef {'6' | '7'} AiMajor */

/** The AI SDK majors the packages support, with the oldest Node each one runs on. */
export const majors = /** @type {const} */ ({ 6: { node: 20 }, 7: { node: 22 } });

/**
 * For AI SDK 6: the packages whose imports are swapped, and the tooling/ alias that replaces each.
 * The aliases are installed under tooling/ (its package.json), so they resolve from there.
 */
const majorSixAliases = /** @type {const} */ ({
  ai: 'ai-v6',
  '@ai-sdk/openai': '@ai-sdk/openai-v3',
  '@ai-sdk/react': '@ai-sdk/react-v3',
});

/** tooling/package.json: the aliases resolve from this file's folder. */
export const aliasAnchor = fileURLToPath(new URL('../package.json', import.meta.url));

/**
 * The major to run: CTXGRAPH_AI_MAJOR when set (a clear error for anything but 6 or 7), else 7 on
 * Node 22+ and 6 before.
 * @param {NodeJS.ProcessEnv} [environment]
 * @param {string} [nodeVersion] e.g. process.versions.node
 * @returns {AiMajor}
 */
export function aiMajor(environment = process.env, nodeVersion = process.versions.node) {
  const chosen = environment.CTXGRAPH_AI_MAJOR;
  if (chosen !== undefined && chosen !== '') {
    if (chosen !== '6' && chosen !== '7') {
      throw new Error(
        `CTXGRAPH_AI_MAJOR must be 6 or 7 (the AI SDK major), received ${JSON.stringify(chosen)}.`,
      );
    }
    return chosen;
  }
  return Number(nodeVersion.split('.')[0]) >= majors[7].node ? '7' : '6';
}

/**
 * The alias a bare specifier stands for in `major`, subpath kept (`ai/test` → `ai-v6/test`), or
 * undefined when it is not swapped.
 * @param {string} specifier
 * @param {AiMajor} major
 * @returns {string | undefined}
 */
export function majorSpecifier(specifier, major) {
  if (major !== '6') return undefined;
  for (const [name, alias] of Object.entries(majorSixAliases)) {
    if (specifier === name) return alias;
    if (specifier.startsWith(`${name}/`)) return alias + specifier.slice(name.length);
  }
  return undefined;
}
