export { serializeTrajectory } from './serialize-trajectory.js';
export { scoreKey } from './hash.js';
export { loadTemplate, listTemplates, BUILTIN_TEMPLATE_DIR, type TemplateLookup } from './template-registry.js';
export { TemplateFile, TemplateSettings } from './template-schema.js';
export type { Serialized, SerializeOptions } from './types.js';
