// Which AI SDK major the workspace's tests and apps run against: the "lane". The workspace
// installs both majors: `ai` (7, the default) and, under tooling/, the aliases `ai-v6`,
// `@ai-sdk/openai-v3` and `@ai-sdk/react-v3` (AI SDK 6 and its companions). Lane 7 uses the
// packages as installed; lane 6 swaps every import of `ai` (and those companions) for the
// aliases, in vitest through
// the plugin in vitest-plugin.ts and in plain Node processes through hooks.mjs (register.mjs).
//
// The lane is CTXGRAPH_AI_LANE (6 or 7) when set, else the one the running Node supports:
// AI SDK 7 needs Node 22 or newer, so Node 20 runs lane 6 and Node 22+ lane 7.
import { fileURLToPath } from 'node:url';

/** @typedef {'6' | '7'} AiLane */

/** The AI SDK majors the packages support, with the oldest Node each one runs on. */
export const lanes = /** @type {const} */ ({ 6: { node: 20 }, 7: { node: 22 } });

/**
 * For lane 6: the packages whose imports are swapped, and the tooling/ alias that replaces each.
 * The aliases are installed under tooling/ (its package.json), so they resolve from there.
 */
const laneSixAliases = /** @type {const} */ ({
  ai: 'ai-v6',
  '@ai-sdk/openai': '@ai-sdk/openai-v3',
  '@ai-sdk/react': '@ai-sdk/react-v3',
});

/** tooling/package.json: the aliases resolve from this file's folder. */
export const aliasAnchor = fileURLToPath(new URL('../package.json', import.meta.url));

/**
 * The lane to run: CTXGRAPH_AI_LANE when set (a clear error for anything but 6 or 7), else 7 on
 * Node 22+ and 6 before.
 * @param {NodeJS.ProcessEnv} [environment]
 * @param {string} [nodeVersion] e.g. process.versions.node
 * @returns {AiLane}
 */
export function aiLane(environment = process.env, nodeVersion = process.versions.node) {
  const chosen = environment.CTXGRAPH_AI_LANE;
  if (chosen !== undefined && chosen !== '') {
    if (chosen !== '6' && chosen !== '7') {
      throw new Error(
        `CTXGRAPH_AI_LANE must be 6 or 7 (the AI SDK major), received ${JSON.stringify(chosen)}.`,
      );
    }
    return chosen;
  }
  return Number(nodeVersion.split('.')[0]) >= lanes[7].node ? '7' : '6';
}

/**
 * The alias a bare specifier stands for in `lane`, subpath kept (`ai/test` → `ai-v6/test`), or
 * undefined when it is not swapped.
 * @param {string} specifier
 * @param {AiLane} lane
 * @returns {string | undefined}
 */
export function laneSpecifier(specifier, lane) {
  if (lane !== '6') return undefined;
  for (const [name, alias] of Object.entries(laneSixAliases)) {
    if (specifier === name) return alias;
    if (specifier.startsWith(`${name}/`)) return alias + specifier.slice(name.length);
  }
  return undefined;
}
