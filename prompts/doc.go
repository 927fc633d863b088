// Package prompts renders the prompts of the narrative phases from
// text/template files: the defaults embedded from this folder, each
// overridable by a file of the same name in a simulation's prompts/ folder.
// Templates are parsed once; a missing key or field is an error naming the
// template and the key, never an empty string sent to a model.
//
// The data each template receives (IntentionData, ResolutionData) is built
// from the world by Snapshot.IntentionData and Snapshot.ResolutionData and documented
// field by field in README.md.
package prompts
