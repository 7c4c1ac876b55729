package driver
import ("testing";"encoding/json";"os";"context")
func TestHJDbg(t *testing.T){
dir := os.Getenv("HJ_DIR")
d, _ := openJunosFixture(t, dir)
call := napalmGetters[os.Getenv("HJ_GETTER")]
r, err := call(context.Background(), d)
b,_ := json.Marshal(r)
os.WriteFile("/tmp/hj-got.json", b, 0o644)
if err != nil { t.Log(err) }
}
