// `node --import <this file>`: in lane 6 (lane.mjs), every later import of `ai`, `@ai-sdk/openai`
// or `@ai-sdk/react` in this process resolves to AI SDK 6; in lane 7 it does nothing. Child
// processes inherit the lane through CTXGRAPH_AI_LANE when it is set, or pick the same one from
// the same Node.
import { register } from 'node:module';
import { aiLane } from './lane.mjs';

if (aiLane() === '6') register('./hooks.mjs', import.meta.url);
