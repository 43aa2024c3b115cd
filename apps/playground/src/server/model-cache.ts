import { type BudgetOptions, openAICacheProfile } from '@ctxgraph/engine';
import type { LanguageModel } from 'ai';

/** What a budget says about the model, so the engine plans with that model's cache profile. */
export type ModelCacheOptions = Pick<BudgetOptions, 'model' | 'cacheProfile'>;

/**
 * The cache options a call for `modelId` is planned with: for the configured model (or no model
 * asked about), what its replies are planned with, so a dry run predicts what the next reply
 * reads; for any other model id, the engine places the id in its family (`gpt-4o-mini` OpenAI,
 * `claude-…` Anthropic, an unknown one no cache). The offline echo model caches the way OpenAI
 * does (an automatic prefix, from 1,024 tokens in steps of 128), so it is planned as OpenAI.
 */
export function modelCacheOptions(
  languageModel: LanguageModel | null,
  modelId?: string,
): ModelCacheOptions {
  if (languageModel !== null && (modelId === undefined || modelId === modelIdOf(languageModel))) {
    if (typeof languageModel === 'object' && languageModel.provider === 'ctxgraph-playground')
      return { cacheProfile: openAICacheProfile() };
    return { model: languageModel };
  }
  return modelId === undefined ? {} : { model: modelId };
}

/** The id the usage of a reply is recorded under: the configured model's. */
export function modelIdOf(model: LanguageModel): string {
  return typeof model === 'string' ? model : model.modelId;
}
