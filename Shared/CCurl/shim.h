#ifndef TOLLGATE_CCURL_SHIM_H
#define TOLLGATE_CCURL_SHIM_H

/* libcurl for Swift. curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic, which Swift
 * cannot call: these wrappers fix one argument type each. */

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

/* The write and header callbacks' type: (data, 1, length, userdata) -> bytes taken. */
typedef size_t (*tg_curl_data_callback)(char *data, size_t size, size_t count, void *userdata);

static inline CURLcode tg_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }

static inline CURLcode tg_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tg_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tg_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tg_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tg_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tg_curl_easy_setopt_callback(CURL *handle, CURLoption option, tg_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tg_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode tg_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/* The result of a finished transfer (a field of an anonymous union in CURLMsg). */
static inline CURLcode tg_curl_msg_result(const CURLMsg *message) { return message->data.result; }

/* Whether the message says a transfer finished. */
static inline int tg_curl_msg_is_done(const CURLMsg *message) { return message->msg == CURLMSG_DONE; }

static inline long tg_curl_http_version_2tls(void) { return CURL_HTTP_VERSION_2TLS; }

static inline long tg_curl_pipe_multiplex(void) { return CURLPIPE_MULTIPLEX; }

#endif
