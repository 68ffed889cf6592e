// Command serveclient shows a client of toy's OpenAI-compatible server: it
// starts the server `toy serve` runs (package serve) in-process on a free
// port of 127.0.0.1, then talks to it over HTTP with net/http and
// encoding/json, as any OpenAI client would, and shuts it down.
//
//	go run ./examples/serveclient
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/serve"
)

func main() {
	// The server side: the default model behind serve.Server, an
	// http.Handler. Port 0 asks the system for a free port.
	m, err := toy.LoadDefault()
	check(err)
	defer m.Close()
	handler, err := serve.New(m, serve.Options{})
	check(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	url := "http://" + ln.Addr().String()
	fmt.Println("serving on", url)

	// The client side: POST /v1/chat/completions. toy-go has no chat
	// template, so the server sends it the messages' text as it is.
	req := map[string]any{
		"model":       "toy-go",
		"messages":    []map[string]string{{"role": "user", "content": "func (b *Buffer) Len() int {"}},
		"max_tokens":  24,
		"temperature": 0, // greedy: the same reply every time
	}
	body, err := json.Marshal(req)
	check(err)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	check(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		log.Fatalf("%s: %s", resp.Status, e.Error.Message)
	}

	// The parts of OpenAI's response this client reads.
	var reply struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	check(json.NewDecoder(resp.Body).Decode(&reply))
	if len(reply.Choices) == 0 {
		log.Fatal("the response has no choices")
	}
	c := reply.Choices[0]
	fmt.Printf("reply (%s, %d prompt + %d completion tokens):\n%s\n",
		c.FinishReason, reply.Usage.PromptTokens, reply.Usage.CompletionTokens, c.Message.Content)

	// Shutdown waits for requests in flight, then stops the server.
	check(srv.Shutdown(context.Background()))
	fmt.Println("server stopped")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
