// Node module hooks for AI SDK 6 (see major.mjs): an import of `ai`, `@ai-sdk/openai` or `@ai-sdk/react`, from any
// file, resolves to the AI SDK 6 alias installed under tooling/. Registered by register.mjs.
import { pathToFileURL } from 'node:url';
import { aliasAnchor, majorSpecifier } from './major.mjs';

const anchorURL = pathToFileURL(aliasAnchor).href;

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  const alias = majorSpecifier(specifier, '6');
  if (alias === undefined) return nextResolve(specifier, context);
  return nextResolve(alias, { ...context, parentURL: anchorURL });
}
