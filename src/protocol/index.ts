export * from './errors.js';
export * from './schemas.js';
export * from './version.js';
export * from './validate.js';
