/** Kept so host specs written against the old path still load; the scene lives in `../support/scene.ts`. */
export * from '../support/scene.ts'
