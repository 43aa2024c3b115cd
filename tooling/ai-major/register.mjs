// `node --import <this file>`: in AI SDK 6 (major.mjs), every later import of `ai`, `@ai-sdk/openai`
// or `@ai-sdk/react` in this process resolves to AI SDK 6; in AI SDK 7 it does nothing. Child
// processes inherit the major through CTXGRAPH_AI_MAJOR when it is set, or pick the same one from
// the same Node.
import { register } from 'node:module';
import { aiMajor } from './major.mjs';

if (aiMajor() === '6') register('./hooks.mjs', import.meta.url);
