#include "reply_json.h"

#include <string.h>

/* Index just past the string that starts at json[at] (a quote), or `length` when it never
 * ends. */
static size_t string_end(const char *json, size_t length, size_t at)
{
    for (size_t i = at + 1; i < length; i++) {
        if (json[i] == '\\')
            i++;
        else if (json[i] == '"')
            return i + 1;
    }
    return length;
}

static size_t skip_space(const char *json, size_t length, size_t at)
{
    while (at < length && (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' || json[at] == '\r'))
        at++;
    return at;
}

/* The string value at json[at] (a quote), unescaped into `out`: an escape becomes the byte
 * it names when printable ASCII, '?' otherwise (\uXXXX included): the module only logs
 * and compares these. */
static void copy_string(const char *json, size_t end, size_t at, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = at + 1; i + 1 < end && n + 1 < size; i++) {
        char c = json[i];
        if (c == '\\' && i + 2 < end) {
            char escaped = json[++i];
            if (escaped == 'u')
                i += 4 < end - i ? 4 : end - i - 1;
            c = (escaped == '"' || escaped == '\\' || escaped == '/') ? escaped : '?';
        }
        out[n++] = c;
    }
    out[n] = '\0';
}

/* Makes `out` printable ASCII, '?' for any other byte. */
static void printable(char *out)
{
    for (; *out; out++)
        if ((unsigned char)*out < 0x20 || (unsigned char)*out > 0x7e)
            *out = '?';
}

bool pp_json_scalar(const char *json, size_t length, const char *key, char *out, size_t size)
{
    size_t key_length = strlen(key);
    if (size == 0)
        return false;
    for (size_t i = 0; i < length;) {
        if (json[i] != '"') {
            i++;
            continue;
        }
        size_t end = string_end(json, length, i);
        size_t after = skip_space(json, length, end);
        bool is_key = after < length && json[after] == ':';
        if (!is_key || end - i - 2 != key_length || memcmp(json + i + 1, key, key_length) != 0) {
            i = end;
            continue;
        }
        size_t value = skip_space(json, length, after + 1);
        if (value >= length)
            return false;
        if (json[value] == '"') {
            size_t value_end = string_end(json, length, value);
            if (value_end > length || json[value_end - 1] != '"' || value_end - value < 2)
                return false;
            copy_string(json, value_end, value, out, size);
            printable(out);
            return true;
        }
        if (json[value] == '{' || json[value] == '[')
            return false;
        size_t n = 0;
        while (value < length && n + 1 < size && strchr(",}] \t\r\n", json[value]) == NULL)
            out[n++] = json[value++];
        out[n] = '\0';
        printable(out);
        return n > 0;
    }
    return false;
}
