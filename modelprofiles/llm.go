package modelprofiles

//go:generate go test -run ^TestGenerated$ -update

import (
	"fmt"

	"pipeplan/core/model"
)

// LLM is one embedded large-language-model preset: the architecture keys
// of its Hugging Face config.json (llm/<id>.json) and the parameter counts
// its publisher states, with sources (llm/README.md).
type LLM struct {
	// ID is the preset id, e.g. "llama3-405b".
	ID string `json:"id"`
	// Name is the display name.
	Name string `json:"name"`
	// Seq is the pre-training sequence length the preset plans with.
	Seq int `json:"seq"`
	// SeqSource says where Seq comes from.
	SeqSource string `json:"seq_source"`
	// ConfigURL is the config.json the architecture keys were copied from.
	ConfigURL string `json:"config_url"`
	// PublishedParams is the total parameter count the publisher states.
	PublishedParams float64 `json:"published_params"`
	// PublishedActiveParams is the stated activated parameters per token
	// (mixture-of-experts models), 0 otherwise.
	PublishedActiveParams float64 `json:"published_active_params,omitempty"`
	// ParamsSource says where the published counts come from.
	ParamsSource string `json:"params_source"`
	// Counting is how the publisher counts parameters where it differs
	// from model.Transformer's Params and ActiveParams (the word embedding
	// and output layer in, multi-token prediction out): CountingAsModel
	// (""), CountingActiveWithoutEmbedding or
	// CountingWithMTPWithoutEmbeddings.
	Counting string `json:"counting,omitempty"`
}

// Publishers' ways of counting parameters (LLM.Counting).
const (
	// CountingAsModel counts as model.Transformer does.
	CountingAsModel = ""
	// CountingActiveWithoutEmbedding leaves the input embedding (a
	// lookup, no GEMM) out of the active count but keeps the output
	// layer, as OpenAI's gpt-oss model card counts.
	CountingActiveWithoutEmbedding = "active-without-embedding"
	// CountingWithMTPWithoutEmbeddings counts the multi-token prediction
	// layers in and the word embedding and output layer out, in the total
	// and the active count (GLM-4.5's technical report, Table 1).
	CountingWithMTPWithoutEmbeddings = "with-mtp-without-embeddings"
)

// llms is the catalog of LLM presets. Parameter counts are the publishers'
// rounded figures; llm/README.md lists the sources.
var llms = []LLM{
	{"llama2-7b", "Llama 2 7B", 4096, "Llama 2 paper (Touvron et al. 2023) §2.2 and Table 1: context length 4k", "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json", 6.74e9, 0, "Hugging Face model page, safetensors size (6.74B params)", CountingAsModel},
	{"llama2-13b", "Llama 2 13B", 4096, "Llama 2 paper §2.2 and Table 1: context length 4k", "https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json", 13.0e9, 0, "Hugging Face model page, safetensors size (13B params)", CountingAsModel},
	{"llama2-70b", "Llama 2 70B", 4096, "Llama 2 paper §2.2 and Table 1: context length 4k, GQA for 70B", "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json", 69.0e9, 0, "Hugging Face model page, safetensors size (69B params)", CountingAsModel},
	{"llama3-8b", "Llama 3.1 8B", 8192, "Llama 3 paper §3.4.1: pre-training at 8K context", "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json", 8.03e9, 0, "Hugging Face model page, safetensors size (8.03B params)", CountingAsModel},
	{"llama3-70b", "Llama 3.1 70B", 8192, "Llama 3 paper §3.4.1: pre-training at 8K context", "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json", 70.6e9, 0, "Hugging Face model page, safetensors size (70.6B params)", CountingAsModel},
	{"llama3-405b", "Llama 3.1 405B", 8192, "Llama 3 paper §3.4.1 and Table 4: pre-training at 8K context", "https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json", 405.9e9, 0, "Hugging Face model page, safetensors size (406B params); Llama 3 paper Table 3 (405B)", CountingAsModel},
	{"mixtral-8x7b", "Mixtral 8x7B", 4096, "planning default: the training sequence length is not published", "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json", 46.7e9, 12.9e9, "Mixtral of Experts (Jiang et al. 2024) §2: 47B total, 13B active; Mistral AI announcement: 46.7B total, 12.9B per token", CountingAsModel},
	{"mixtral-8x22b", "Mixtral 8x22B", 4096, "planning default: the training sequence length is not published", "https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json", 141e9, 39e9, "Mistral AI announcement (Cheaper, Better, Faster, Stronger, 2024-04-17): 141B total, 39B active", CountingAsModel},
	{"qwen2.5-72b", "Qwen2.5 72B", 4096, "planning default: Qwen2.5 report gives 4,096 for the first pre-training stage", "https://huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json", 72.7e9, 0, "Hugging Face model card: 72.7B parameters", CountingAsModel},
	{"qwen3-30b-a3b", "Qwen3 30B-A3B", 4096, "Qwen3 technical report §3.2: stage 1 pre-training at 4,096", "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json", 30.5e9, 3.3e9, "Hugging Face model card: 30.5B total, 3.3B activated", CountingAsModel},
	{"qwen3-235b-a22b", "Qwen3 235B-A22B", 4096, "Qwen3 technical report §3.2: stage 1 pre-training at 4,096", "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json", 235e9, 22e9, "Hugging Face model card: 235B total, 22B activated", CountingAsModel},
	{"gpt-oss-120b", "gpt-oss-120b", 4096, "config.json initial_context_length 4096 (YaRN extends it to 131072)", "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json", 116.83e9, 5.13e9, "OpenAI, gpt-oss-120b & gpt-oss-20b Model Card (arXiv:2508.10925), parameter table: 116.83B total, 5.13B active ('Unembedding parameters are counted towards active, but not embeddings')", CountingActiveWithoutEmbedding},
	{"gpt-oss-20b", "gpt-oss-20b", 4096, "config.json initial_context_length 4096 (YaRN extends it to 131072)", "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json", 20.91e9, 3.61e9, "OpenAI, gpt-oss-120b & gpt-oss-20b Model Card (arXiv:2508.10925), parameter table: 20.91B total, 3.61B active ('Unembedding parameters are counted towards active, but not embeddings')", CountingActiveWithoutEmbedding},
	{"glm-4.5", "GLM-4.5", 4096, "GLM-4.5 technical report (arXiv:2508.06471) §2.3: 'The maximum sequence length is kept at 4,096 in pre-training'", "https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json", 355e9, 32e9, "zai-org/GLM-4.5 README: 355 billion total, 32 billion active parameters; technical report Table 1: 'we include the parameters of MTP layers but not word embeddings and the output layer'", CountingWithMTPWithoutEmbeddings},
	{"kimi-k2", "Kimi K2", 4096, "Kimi K2 tech report (arXiv:2507.20534) §2.5: pre-trained with a 4,096-token context window", "https://huggingface.co/moonshotai/Kimi-K2-Base/blob/main/config.json", 1e12, 32e9, "Kimi K2 README (github.com/MoonshotAI/Kimi-K2): 1 trillion total, 32 billion activated parameters", CountingAsModel},
	{"deepseek-v3", "DeepSeek-V3", 4096, "DeepSeek-V3 report §4.2: pre-training sequence length 4K", "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json", 671e9, 37e9, "DeepSeek-V3 technical report abstract: 671B total, 37B activated per token (without the 14B multi-token-prediction module)", CountingAsModel},
}

// LLMs returns the LLM presets in a fixed order.
func LLMs() []LLM { return append([]LLM(nil), llms...) }

// Transformer returns the named LLM preset as a transformer at its
// pre-training sequence length, with the catalog entry. The transformer is
// what model.ParseHFConfig reads from llm/<id>.json, generated into
// data_gen.go (go generate; TestGenerated fails when it is stale), so no
// JSON is parsed at run time; its pointers are fresh copies.
func Transformer(id string) (model.Transformer, LLM, error) {
	for _, in := range llms {
		if in.ID != id {
			continue
		}
		tr, ok := llmConfigs[id]
		if !ok {
			return model.Transformer{}, in, fmt.Errorf("preset %q: not in data_gen.go (run go generate ./modelprofiles)", id)
		}
		if tr.MoE != nil {
			moe := *tr.MoE
			tr.MoE = &moe
		}
		if tr.MLA != nil {
			mla := *tr.MLA
			tr.MLA = &mla
		}
		tr.Name, tr.Seq = in.Name, in.Seq
		return tr, in, nil
	}
	ids := make([]string, len(llms))
	for i, in := range llms {
		ids[i] = in.ID
	}
	return model.Transformer{}, LLM{}, fmt.Errorf("preset %q: not an LLM preset (have %v)", id, ids)
}
